// tools/list as clients receive it. Every connected client carries this list in its context on every turn,
// and the SDK client compiles each outputSchema (Ajv) whenever it lists the tools, so the list is written
// small (issue 25: at most 24 KB, names, descriptions and input schemas at most 12 KB): TypeBox's JSON Schema
// in its shortest equivalent form, input schemas without string length bounds, output schemas without
// descriptions. The tools themselves keep descriptions and argument help short, and output schemas that
// type every top-level field of a small answer and only name the required ones of a large answer.
import type { TSchema } from '@sinclair/typebox'
import { TOOLS } from './registry.ts'
import type { Tool, ToolAnnotations } from './types.ts'

type Json = Record<string, unknown>

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

/** A union whose members are all `{const, type}` of one type: the values, else null. */
function literalUnion(anyOf: unknown): { type: unknown; values: unknown[] } | null {
  if (!Array.isArray(anyOf) || anyOf.length === 0) return null
  const type = (anyOf[0] as Json | undefined)?.type
  const plain = (m: unknown) => isObject(m) && 'const' in m && m.type === type && Object.keys(m).length === 2
  return anyOf.every(plain) ? { type, values: anyOf.map((m) => (m as Json).const) } : null
}

/** Record(String, X) as TypeBox writes it: patternProperties with the match-all key. */
const ANY_KEY = '^(.*)$'

/** `anyOf: [X, {type: "null"}]` with X of one plain type and no enum: X with "null" added to its type, else null. */
function nullable(anyOf: unknown): Json | null {
  if (!Array.isArray(anyOf) || anyOf.length !== 2) return null
  const [x, n] = anyOf as unknown[]
  if (!isObject(x) || !isObject(n) || n.type !== 'null' || Object.keys(n).length !== 1) return null
  if (typeof x.type !== 'string' || 'enum' in x || 'const' in x || 'anyOf' in x) return null
  return { ...x, type: [x.type, 'null'] }
}

/** A property schema that accepts anything (TypeBox's Unknown): naming it in `required` says all there is. */
const isAnything = (v: unknown) => isObject(v) && Object.keys(v).length === 0

/**
 * The shortest JSON Schema that accepts and rejects the same values: `anyOf` of literals of one type as
 * `{type, enum}`, a nullable as a type list, `patternProperties: {"^(.*)$": X}` as `additionalProperties: X`
 * (dropped when X accepts anything), optional properties that accept anything dropped from an open object,
 * an empty `properties` dropped; TypeBox's symbols dropped too (JSON only).
 */
export function compactSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(compactSchema)
  if (!isObject(schema)) return schema
  const union = literalUnion(schema.anyOf)
  const orNull = union ? null : nullable(schema.anyOf)
  const out: Json = union ? { type: union.type, enum: union.values } : {}
  if (orNull) {
    const { anyOf: _, ...rest } = schema
    return compactSchema({ ...rest, ...orNull })
  }
  for (const [key, value] of Object.entries(schema)) {
    if (union && key === 'anyOf') continue
    if (key === 'patternProperties' && isObject(value) && Object.keys(value).length === 1 && ANY_KEY in value && !schema.properties) {
      const each = value[ANY_KEY]
      if (!isAnything(each)) out.additionalProperties = compactSchema(each)
      continue
    }
    if (key === 'properties' && isObject(value)) {
      // An optional property that accepts anything says nothing; a required one stays named (strict validators ask
      // that every required property be defined), and under additionalProperties: false every one stays.
      const required = new Set(Array.isArray(schema.required) ? schema.required : [])
      const said = ([k, v]: [string, unknown]) => schema.additionalProperties === false || required.has(k) || !isAnything(v)
      const kept = Object.entries(value).filter(said)
      if (kept.length > 0) out.properties = Object.fromEntries(kept.map(([k, v]) => [k, compactSchema(v)]))
      continue
    }
    if ((key === 'items' || key === 'additionalProperties') && isAnything(value)) continue
    out[key] = compactSchema(value)
  }
  return out
}

const PLAN_NOTE = { launch: ' (Launch and Scale plans.)', scale: ' (Scale plan.)' } as const

/** A schema without the given keywords, wherever they appear (a property of that name stays). */
function without(keywords: ReadonlySet<string>, schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map((s) => without(keywords, s))
  if (!isObject(schema)) return schema
  const out: Json = {}
  for (const [key, value] of Object.entries(schema)) {
    if (keywords.has(key) && (typeof value === 'string' || typeof value === 'number')) continue
    out[key] =
      key === 'properties' && isObject(value)
        ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, without(keywords, v)]))
        : without(keywords, value)
  }
  return out
}

/** String length bounds of an argument: the server checks them and names the one broken; no caller needs them to choose. */
const INPUT_LEFT_OUT = new Set(['minLength', 'maxLength'])
/**
 * An answer names its own fields, and hosts give the model the name, description and inputSchema of a tool:
 * the outputSchema is for the client's check of the answer, so it goes without the descriptions (the code keeps them).
 */
const OUTPUT_LEFT_OUT = new Set(['description'])

/** A tool's hints as tools/list shows them: its title is the tool's own `title` (MCP 2025-06-18), not said twice. */
function hints(a: ToolAnnotations) {
  const { title: _, ...rest } = a
  return rest
}

const json = (schema: TSchema) => JSON.parse(JSON.stringify(schema)) as unknown

/** One tool as tools/list shows it. */
export function listedTool(t: Tool) {
  return {
    name: t.name,
    title: t.annotations.title,
    description: t.plan === 'free' ? t.description : `${t.description}${PLAN_NOTE[t.plan]}`,
    inputSchema: compactSchema(without(INPUT_LEFT_OUT, json(t.input))) as Json & { type: 'object' },
    outputSchema: compactSchema(without(OUTPUT_LEFT_OUT, json(t.output))) as Json & { type: 'object' },
    annotations: hints(t.annotations),
    ...(t.meta ? { _meta: t.meta } : {}),
  }
}

/** tools/list is the same for every caller: computed once, as plain JSON. */
export const TOOL_LIST = { tools: TOOLS.map(listedTool) }

/** The same, serialised once. */
export const TOOL_LIST_JSON = JSON.stringify(TOOL_LIST)

export interface ToolListSize {
  /** The whole `{tools: [...]}` result, in UTF-8 bytes of its JSON. */
  total: number
  /** What an agent chooses a tool and its arguments by: each tool's name, description and inputSchema. */
  namesDescriptionsInputs: number
  /** Every outputSchema. */
  outputSchemas: number
}

const bytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v), 'utf8')

/** The sizes of a tools/list result (as a client received it, or ours). */
export function toolListSize(list: {
  tools: ReadonlyArray<{ name: string; description?: string; inputSchema: unknown; outputSchema?: unknown }>
}): ToolListSize {
  let namesDescriptionsInputs = 0
  let outputSchemas = 0
  for (const t of list.tools) {
    namesDescriptionsInputs += bytes({ name: t.name, description: t.description, inputSchema: t.inputSchema })
    if (t.outputSchema !== undefined) outputSchemas += bytes(t.outputSchema)
  }
  return { total: bytes(list), namesDescriptionsInputs, outputSchemas }
}
