// Tool arguments that do not match the input schema, said so a caller can fix them in one go: each argument
// named once, with what it got and what it takes (the allowed values of an enum, "a list of" them for an
// array, the kind of id and the tool that reads the kind it got). TypeBox's own words ("Expected required
// property; Expected string", "Expected array", "Expected union value") name neither. Its error iterator is
// read lazily: never past the first `max` errors of a huge argument.
import { Value, ValueErrorType } from '@sinclair/typebox/value'
import type { TSchema } from '@sinclair/typebox'

export interface ArgProblem {
  /** JSON Pointer of the argument, e.g. /status or /options/maxPages. */
  path: string
  message: string
}

type Schema = {
  type?: string
  anyOf?: Schema[]
  const?: unknown
  items?: Schema
  pattern?: string
  minimum?: number
  maximum?: number
  minLength?: number
  maxLength?: number
  maxItems?: number
  properties?: Record<string, Schema>
  description?: string
}

/** Ids by prefix: what each is called and which argument and tool take it. */
const ID_KINDS: Record<string, { name: string; arg: string; reader: string }> = {
  scn: { name: 'a scan id', arg: 'scanId', reader: 'get_scan' },
  aud: { name: 'an audit id', arg: 'auditId', reader: 'get_audit' },
}

/** The values of a union of literals (an enum), else null. */
export function literalValues(schema: Schema | undefined): unknown[] | null {
  const anyOf = schema?.anyOf
  if (!Array.isArray(anyOf) || anyOf.length === 0) return null
  if (!anyOf.every((s) => typeof s === 'object' && s !== null && 'const' in s)) return null
  return anyOf.map((s) => s.const)
}

const shown = (v: unknown) => {
  const text = JSON.stringify(v) ?? String(v)
  return text.length > 60 ? `${text.slice(0, 57)}...` : text
}

/** What a value is, in a few words: "fail" (a string), 42 (a number), an object, a list of 3. */
function got(v: unknown): string {
  if (v === undefined) return 'nothing'
  if (v === null) return 'null'
  if (Array.isArray(v)) return `a list of ${v.length}`
  if (typeof v === 'object') return 'an object'
  return `${shown(v)} (a ${typeof v})`
}

/** What a schema takes, in a few words. */
export function expectation(s: Schema): string {
  const values = literalValues(s)
  if (values) return `one of: ${values.map(String).join(', ')}`
  if (s.type === 'array') {
    const inner = s.items ? literalValues(s.items) : null
    const of = inner ? `a list of: ${inner.map(String).join(', ')}` : `a list of ${s.items ? expectation(s.items) : 'values'}`
    return s.maxItems !== undefined ? `${of} (at most ${s.maxItems})` : of
  }
  if (s.type === 'integer' || s.type === 'number') {
    const kind = s.type === 'integer' ? 'an integer' : 'a number'
    if (s.minimum !== undefined && s.maximum !== undefined) return `${kind} from ${s.minimum} to ${s.maximum}`
    if (s.minimum !== undefined) return `${kind} of at least ${s.minimum}`
    if (s.maximum !== undefined) return `${kind} of at most ${s.maximum}`
    return kind
  }
  if (s.type === 'string') {
    const id = idKindOf(s)
    if (id) return `${id.name} (${id.prefix}_...)`
    if (s.maxLength !== undefined) return `a string of at most ${s.maxLength} characters`
    return 'a string'
  }
  if (s.type === 'boolean') return 'true or false'
  if (s.type === 'object') return 'an object'
  return 'a value of another kind'
}

function idKindOf(s: Schema): { prefix: string; name: string } | null {
  const prefix = /^\^([a-z]+)_/.exec(s.pattern ?? '')?.[1]
  if (!prefix) return null
  return { prefix, name: ID_KINDS[prefix]?.name ?? `an id` }
}

/** An id of another kind than the argument takes: where it goes instead. */
function idHint(s: Schema, value: unknown, input: Schema): string | null {
  const want = idKindOf(s)
  if (!want || typeof value !== 'string') return null
  const prefix = /^([a-z]+)_/.exec(value)?.[1]
  const kind = prefix && prefix !== want.prefix ? ID_KINDS[prefix] : undefined
  if (!kind) return null
  return input.properties?.[kind.arg]
    ? `${shown(value)} is ${kind.name}: pass it as ${kind.arg}`
    : `${shown(value)} is ${kind.name}: read it with ${kind.reader} (${kind.arg})`
}

/** The first sentence of a description, short: what the argument is for. */
function purpose(s: Schema): string {
  const d = s.description ?? ''
  const end = d.search(/(?<!e\.g|i\.e)\.\s/)
  const first = end >= 0 ? d.slice(0, end + 1) : d
  return first && first.length <= 140 ? ` (${first})` : ''
}

/** One problem per argument, for the first `max` errors TypeBox finds. */
export function argumentProblems(input: TSchema, args: unknown, max = 20): ArgProblem[] {
  const byPath = new Map<string, ArgProblem>()
  let seen = 0
  for (const e of Value.Errors(input, args)) {
    if (++seen > max) break
    const path = e.path || '/'
    if (byPath.has(path)) continue
    byPath.set(path, { path, message: describe(e.type, e.schema as Schema, e.value, input as Schema) })
  }
  return [...byPath.values()]
}

function describe(type: ValueErrorType, s: Schema, value: unknown, input: Schema): string {
  if (type === ValueErrorType.ObjectRequiredProperty) return `is required: ${expectation(s)}${purpose(s)}`
  if (type === ValueErrorType.ObjectAdditionalProperties) {
    const names = Object.keys(s.properties ?? {})
    return names.length > 0 ? `is not an argument here; the arguments are: ${names.join(', ')}` : 'is not an argument here; pass {}'
  }
  const hint = idHint(s, value, input)
  if (hint) return `must be ${expectation(s)}; ${hint}`
  const values = literalValues(s)
  // Kept as the tests and earlier answers word it: "must be one of: a, b".
  if (values) return `must be one of: ${values.map(String).join(', ')}; got ${got(value)}`
  const wrap = s.type === 'array' && !Array.isArray(value) && s.items && Value.Check(s.items as TSchema, value)
  return `must be ${expectation(s)}; got ${got(value)}${wrap ? `: send [${shown(value)}]` : ''}`
}
