// Reading API descriptions confirmed by content: an OpenAPI/Swagger document (JSON, or YAML read line by
// line) and a GraphQL introspection answer. An SPA's index.html at /swagger.json is neither.
import { parseJson } from './personal-data.ts'

/** Path segments and words that name operations not meant for the public. */
export const INTERNAL_NAME =
  /(?:^|[/_.\-{}])(?:admin|administrator|internal|debug|private|management|actuator|superuser|staff|ops|backoffice|sudo|impersonate)s?(?=$|[/_.\-{}?])/i
const INTERNAL_TAG = /^(?:admin|internal|debug|private|management|ops|staff|backoffice)/i
const INTERNAL_FIELD = /^(?:admin|internal|debug|impersonate|sudo|superuser|staff)|(?:Admin|Internal|Debug|Impersonate)/

export interface ApiDocument {
  format: 'openapi' | 'swagger'
  version: string
  /** Operations (method and path) in all. */
  operations: number
  /** Operations whose path or tags name admin or internal use, as "METHOD /path", at most `limit`. */
  internal: string[]
  internalCount: number
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'])

/** An OpenAPI 3 or Swagger 2 document, or null when the body is not one. */
export function readApiDocument(body: string, limit = 5): ApiDocument | null {
  const doc = parseJson(body) ?? swaggerUiInit(body)
  if (doc && typeof doc === 'object' && !Array.isArray(doc)) return fromJson(doc as Record<string, unknown>, limit)
  return fromYaml(body, limit)
}

function fromJson(doc: Record<string, unknown>, limit: number): ApiDocument | null {
  const version = typeof doc.openapi === 'string' ? doc.openapi : typeof doc.swagger === 'string' ? doc.swagger : null
  const paths = doc.paths
  if (!version || !paths || typeof paths !== 'object') return null
  const out: ApiDocument = { format: doc.openapi ? 'openapi' : 'swagger', version, operations: 0, internal: [], internalCount: 0 }
  for (const [path, item] of Object.entries(paths as Record<string, unknown>).slice(0, 5_000)) {
    if (!item || typeof item !== 'object') continue
    for (const [method, op] of Object.entries(item as Record<string, unknown>)) {
      if (!METHODS.has(method)) continue
      out.operations++
      const tags =
        op && typeof op === 'object' && Array.isArray((op as { tags?: unknown }).tags)
          ? ((op as { tags: unknown[] }).tags as unknown[])
          : []
      if (INTERNAL_NAME.test(path) || tags.some((t) => typeof t === 'string' && INTERNAL_TAG.test(t))) {
        out.internalCount++
        if (out.internal.length < limit) out.internal.push(`${method.toUpperCase()} ${path.slice(0, 120)}`)
      }
    }
  }
  return out
}

/** YAML without a parser: the version line, then "  /path:" keys and their "    method:" keys. */
function fromYaml(body: string, limit: number): ApiDocument | null {
  const version = /^(openapi|swagger):\s*["']?([\d.]+)/m.exec(body.slice(0, 4_096))
  if (!version || !/^paths:\s*$/m.test(body)) return null
  const out: ApiDocument = {
    format: version[1] as 'openapi' | 'swagger',
    version: version[2]!,
    operations: 0,
    internal: [],
    internalCount: 0,
  }
  let path: string | null = null
  for (const line of body.split('\n').slice(0, 50_000)) {
    const p = /^ {2}["']?(\/[^"':]*)["']?:\s*$/.exec(line)
    if (p) {
      path = p[1]!
      continue
    }
    const m = /^ {4}(get|put|post|delete|options|head|patch|trace):\s*$/.exec(line)
    if (m && path) {
      out.operations++
      if (INTERNAL_NAME.test(path)) {
        out.internalCount++
        if (out.internal.length < limit) out.internal.push(`${m[1]!.toUpperCase()} ${path.slice(0, 120)}`)
      }
    }
  }
  return out
}

export interface IntrospectedSchema {
  types: number
  /** Fields of the query and mutation types. */
  queries: number
  mutations: number
  /** Query or mutation fields whose names say admin or internal, at most `limit`. */
  internal: string[]
}

/** A GraphQL introspection answer (data.__schema with types), or null. */
export function readIntrospection(body: string, limit = 5): IntrospectedSchema | null {
  const doc = parseJson(body) as { data?: { __schema?: Record<string, unknown> } } | undefined
  const schema = doc?.data?.__schema
  const types = schema?.types
  if (!schema || !Array.isArray(types)) return null
  const fieldsOf = (name: unknown): string[] => {
    const t = types.find((x) => x && typeof x === 'object' && (x as { name?: unknown }).name === name) as { fields?: unknown } | undefined
    return Array.isArray(t?.fields) ? t.fields.map((f) => String((f as { name?: unknown })?.name ?? '')).filter(Boolean) : []
  }
  const queries = fieldsOf((schema.queryType as { name?: unknown } | null)?.name)
  const mutations = fieldsOf((schema.mutationType as { name?: unknown } | null)?.name)
  const internal = [...queries, ...mutations].filter((f) => INTERNAL_FIELD.test(f)).slice(0, limit)
  return { types: types.length, queries: queries.length, mutations: mutations.length, internal }
}

/**
 * swagger-ui-express's swagger-ui-init.js: `var options = {"swaggerDoc": {...}, ...};`, the options written by
 * JSON.stringify, so the object between them parses as JSON.
 */
const SWAGGER_UI_OPTIONS = /var options = (\{[\s\S]*?\n\});\n/

function swaggerUiInit(body: string): Record<string, unknown> | null {
  const m = SWAGGER_UI_OPTIONS.exec(body.slice(0, 600_000))
  const options = m ? parseJson(m[1]!) : null
  const doc = options && typeof options === 'object' ? (options as { swaggerDoc?: unknown }).swaggerDoc : null
  return doc && typeof doc === 'object' && !Array.isArray(doc) ? (doc as Record<string, unknown>) : null
}
