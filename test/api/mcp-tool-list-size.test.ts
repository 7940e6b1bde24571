// tools/list is small enough to carry on every turn (issue 25): at most 24 KB in all, and at most 12 KB of what an
// agent chooses a tool by (names, descriptions, input schemas), as the official SDK client receives it and as the
// raw HTTP answer carries it. Its schemas are TypeBox's written shorter, never looser than the code says except
// where listing.ts says so: each compact schema accepts what the TypeBox schema accepts and refuses a value outside
// an enum. That every tool's real answer validates against its outputSchema is test/api/mcp-output-schema.test.ts.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv'
import { Type } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { compactSchema, TOOL_LIST, TOOL_LIST_JSON, toolListSize } from '../../api/mcp/tools/listing.ts'
import { TOOLS } from '../../api/mcp/tools/registry.ts'
import { connectClient, MCP_HEADERS } from '../harness/client.ts'
import { startService, type TestService } from '../harness/service.ts'

const KB = 1024
const LIMITS = { total: 24 * KB, namesDescriptionsInputs: 12 * KB }

let svc: TestService
let client: Client

beforeAll(async () => {
  svc = await startService('embedded')
  client = await connectClient(svc.mcpUrl, await svc.key('free'))
}, 60_000)

afterAll(async () => {
  await client?.close()
  await svc?.stop()
})

describe('the size of tools/list', () => {
  test('as the SDK client receives it: at most 24 KB, names, descriptions and input schemas at most 12 KB', async () => {
    const listed = await client.listTools()
    expect(listed.tools).toHaveLength(TOOLS.length)
    const size = toolListSize(listed)
    expect(size.total).toBeLessThanOrEqual(LIMITS.total)
    expect(size.namesDescriptionsInputs).toBeLessThanOrEqual(LIMITS.namesDescriptionsInputs)
    // The client parsed what the server sent, nothing dropped: the same sizes as the list the server built.
    expect(size).toEqual(toolListSize(TOOL_LIST))
  })

  test('as the raw HTTP answer carries it (the stateless fast path): the same bytes', async () => {
    const res = await fetch(svc.mcpUrl, {
      method: 'POST',
      headers: { ...MCP_HEADERS, authorization: `Bearer ${await svc.key('free')}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    })
    const body = await res.text()
    expect(body).toContain(TOOL_LIST_JSON)
    expect(Buffer.byteLength(TOOL_LIST_JSON)).toBeLessThanOrEqual(LIMITS.total)
  })

  test('each description still says what the tool is for, and each input schema is an object schema', () => {
    for (const t of TOOL_LIST.tools) {
      expect(t.description.length, t.name).toBeGreaterThan(60)
      expect(t.inputSchema.type, t.name).toBe('object')
      expect(t.outputSchema.type, t.name).toBe('object')
    }
  })
})

/** A value of a JSON Schema as TypeBox writes it, with every optional field present and one item in every list. */
function sample(s: any): unknown {
  if (s.const !== undefined) return s.const
  if (s.default !== undefined) return s.default
  if (Array.isArray(s.anyOf)) return sample(s.anyOf[0])
  switch (s.type) {
    case 'string':
      // ^scn_[0-9A-Za-z]+$ and ^(scn|aud)_...: an id of the first kind.
      return s.pattern ? `${/^\^\(?([A-Za-z]+)/.exec(s.pattern)![1]}_1` : 'x'.repeat(Math.max(1, s.minLength ?? 0))
    case 'integer':
    case 'number':
      return s.minimum ?? 0
    case 'boolean':
      return false
    case 'null':
      return null
    case 'array':
      return s.items ? [sample(s.items)] : []
    case 'object': {
      const out: Record<string, unknown> = {}
      for (const [k, v] of Object.entries(s.properties ?? {})) out[k] = sample(v)
      for (const v of Object.values(s.patternProperties ?? {})) out.key = sample(v)
      return out
    }
    default:
      return 'anything'
  }
}

describe('the compact schemas accept what the TypeBox schemas accept', () => {
  const ajv = new AjvJsonSchemaValidator()

  test.each(TOOLS.map((t) => [t.name, t] as const))(
    '%s: a value with every field the TypeBox schema allows passes the listed one',
    (_name, tool) => {
      const listed = TOOL_LIST.tools.find((t) => t.name === tool.name)!
      for (const [typebox, json] of [
        [tool.input, listed.inputSchema],
        [tool.output, listed.outputSchema],
      ] as const) {
        const value = sample(JSON.parse(JSON.stringify(typebox)))
        expect(Value.Check(typebox, value), `${tool.name}: ${JSON.stringify([...Value.Errors(typebox, value)][0])}`).toBe(true)
        const result = ajv.getValidator(json)(value)
        expect(result.errorMessage, `${tool.name}: ${JSON.stringify(value)}`).toBeUndefined()
      }
    },
  )

  test('a union of literals becomes an enum, a nullable a type list, a record of anything an object; each refuses what TypeBox refuses', () => {
    const schema = Type.Object(
      {
        status: Type.Union([Type.Literal('a'), Type.Literal('b')], { description: 'one of two' }),
        when: Type.Union([Type.String(), Type.Null()]),
        evidence: Type.Record(Type.String(), Type.Unknown()),
        counts: Type.Record(Type.String(), Type.Number()),
        anything: Type.Unknown(),
      },
      { additionalProperties: false },
    )
    const compact = compactSchema(JSON.parse(JSON.stringify(schema))) as any
    expect(compact.properties.status).toEqual({ type: 'string', enum: ['a', 'b'], description: 'one of two' })
    expect(compact.properties.when).toEqual({ type: ['string', 'null'] })
    expect(compact.properties.evidence).toEqual({ type: 'object' })
    expect(compact.properties.counts).toEqual({ type: 'object', additionalProperties: { type: 'number' } })
    // Under additionalProperties: false a property that accepts anything stays named.
    expect(compact.properties.anything).toEqual({})
    const validate = ajv.getValidator(compact)
    const good = { status: 'a', when: null, evidence: { x: [1] }, counts: { load: 3 }, anything: 1 }
    expect(Value.Check(schema, good)).toBe(true)
    expect(validate(good).valid).toBe(true)
    for (const bad of [
      { ...good, status: 'c' },
      { ...good, when: 3 },
      { ...good, counts: { load: 'x' } },
      { ...good, extra: 1 },
    ]) {
      expect(Value.Check(schema, bad)).toBe(false)
      expect(validate(bad).valid).toBe(false)
    }
  })

  test('an open object drops the optional properties that accept anything and keeps the required ones named', () => {
    const schema = Type.Object({
      id: Type.String(),
      items: Type.Array(Type.Unknown()),
      summary: Type.Unknown(),
      more: Type.Optional(Type.Unknown()),
    })
    const compact = compactSchema(JSON.parse(JSON.stringify(schema))) as any
    expect(compact).toEqual({
      type: 'object',
      required: ['id', 'items', 'summary'],
      properties: { id: { type: 'string' }, items: { type: 'array' }, summary: {} },
    })
    const validate = ajv.getValidator(compact)
    expect(validate({ id: 'x', items: [1, {}], summary: 2 }).valid).toBe(true)
    expect(validate({ id: 'x', items: [] }).valid).toBe(false)
    expect(validate({ id: 'x', items: {}, summary: 2 }).valid).toBe(false)
  })
})
