// The shape cap that runs before any schema library: each limit refuses just past itself, in words a
// client can act on, and a refusal stops early instead of walking the whole value.
import { describe, expect, test } from 'bun:test'
import { jsonShapeProblem as textShapeProblem, type JsonShapeLimits, MCP_JSON_SHAPE } from '../../../shared/lib/json-shape.ts'

const jsonShapeProblem = (v: unknown, limits: JsonShapeLimits) => textShapeProblem(JSON.stringify(v), limits)

const LIMITS = { depth: 4, keysPerObject: 3, itemsPerArray: 3, values: 12 }
const wide = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]))
const nest = (n: number): unknown => (n === 0 ? 1 : { a: nest(n - 1) })

describe('jsonShapeProblem', () => {
  test('values within every limit pass, scalars included', () => {
    for (const v of [null, 1, 'x'.repeat(100_000), true, [], {}, wide(3), [1, 2, 3], nest(3), { a: [1, { b: [2] }] }])
      expect(jsonShapeProblem(v, LIMITS)).toBeNull()
  })

  test('each limit refuses one past itself', () => {
    expect(jsonShapeProblem(wide(4), LIMITS)).toBe('an object holds more than 3 keys')
    expect(jsonShapeProblem([1, 2, 3, 4], LIMITS)).toBe('an array holds more than 3 items')
    expect(jsonShapeProblem(nest(5), LIMITS)).toBe('the message nests objects and arrays more than 4 deep')
    const many = { a: wide(3), b: wide(3), c: wide(3) } // 1 + 3 + 9 = 13 values
    expect(jsonShapeProblem(many, LIMITS)).toBe('the message holds more than 12 JSON values')
  })

  test('brackets, commas and quotes inside strings are not structure; escaped quotes do not end a string', () => {
    const tricky = { a: '{[,,,,]}"', b: 'x\\', c: '\\"{{{{{' }
    expect(jsonShapeProblem(tricky, LIMITS)).toBeNull()
    expect(textShapeProblem('["\\\\", 1, 2, 3]', LIMITS)).toBe('an array holds more than 3 items')
  })

  test('a text that is not JSON is counted as far as it goes (parsing refuses it next)', () => {
    expect(textShapeProblem('[[[[[', LIMITS)).toBe('the message nests objects and arrays more than 4 deep')
    expect(textShapeProblem('{"a": "unclosed', LIMITS)).toBeNull()
    expect(textShapeProblem('}}]],,,', LIMITS)).toBeNull()
  })

  test('the MCP messages clients send pass; the wide ones of an attack do not', () => {
    const call = {
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: {
        name: 'audit_authenticated',
        arguments: {
          url: 'https://app.example/',
          credentials: { cookies: [{ name: 'sid', value: 'x', domain: 'app.example' }], headers: wide(20) },
        },
        _meta: { progressToken: 7 },
      },
    }
    const initialize = {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: { roots: { listChanged: true }, sampling: {}, elicitation: {} },
        clientInfo: { name: 'c', version: '1' },
      },
    }
    expect(jsonShapeProblem(call, MCP_JSON_SHAPE)).toBeNull()
    expect(jsonShapeProblem([initialize, call, call], MCP_JSON_SHAPE)).toBeNull()
    const attack = { ...call, params: { name: 'scan_app', arguments: wide(90_000) } }
    expect(jsonShapeProblem(attack, MCP_JSON_SHAPE)).toBe('an object holds more than 256 keys')
    const experimental = { ...initialize, params: { ...initialize.params, capabilities: { experimental: wide(80_000) } } }
    expect(jsonShapeProblem(experimental, MCP_JSON_SHAPE)).toBe('an object holds more than 256 keys')
    // Many keys spread over many small objects are counted in all.
    const spread = {
      ...call,
      params: { name: 'scan_app', arguments: Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`o${i}`, wide(200)])) },
    }
    expect(jsonShapeProblem(spread, MCP_JSON_SHAPE)).toBe('the message holds more than 5000 JSON values')
  })
})
