// Argument pieces shared by several tools, the pieces their output schemas share, and the help a caller gets
// for a target URL written without its scheme.
import { type TSchema, Type } from '@sinclair/typebox'

export const Url = Type.String({
  minLength: 1,
  maxLength: 2048,
  description: 'Absolute, e.g. https://example.com/',
})

/** An id of one kind, e.g. scn_...: its pattern says which. */
export const Id = (prefix: string) => Type.String({ maxLength: 64, pattern: `^${prefix}_[0-9A-Za-z]+$` })

export const Limit = Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 }))
export const Cursor = Type.Optional(Type.String({ maxLength: 200, description: 'nextCursor of the last answer.' }))

export const strict = { additionalProperties: false } as const

// ---- Output schemas (tools/list outputSchema; the SDK client validates structuredContent against them) ----

export const Nullable = <T extends TSchema>(t: T, description?: string) => Type.Union([t, Type.Null()], description ? { description } : {})

/** What a failed scan, audit or patch records about its failure. */
export const ErrorInfo = Type.Object({ code: Type.String(), message: Type.String() })

export const ScanStatus = Type.Union(['queued', 'running', 'completed', 'failed'].map((s) => Type.Literal(s)))
export const AuditStatus = Type.Union(['queued', 'running', 'completed', 'failed', 'cancelled'].map((s) => Type.Literal(s)))

/** What a caller may set of an audit (audit_app, audit_authenticated, start_directory_run in mode audit). */
export const AuditOptionsInput = (description?: string) =>
  Type.Object(
    {
      maxPages: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
      maxDepth: Type.Optional(Type.Integer({ minimum: 0, maximum: 10, default: 3 })),
      // The default and ceiling is the server's limit (AUDIT_MAX_DURATION_S, 600 unless configured).
      maxDurationSeconds: Type.Optional(Type.Integer({ minimum: 5, maximum: 7200 })),
    },
    { ...strict, ...(description ? { description } : {}) },
  )

/** The options an audit runs with, defaults applied. */
export const AuditOptions = Type.Object({ maxPages: Type.Integer(), maxDepth: Type.Integer(), maxDurationSeconds: Type.Integer() })

/** What a started audit answers (audit_app, audit_authenticated): its id, the live view, its state and options. */
export const StartedAuditFields = {
  auditId: Type.String(),
  browserViewer: Type.String(),
  status: AuditStatus,
  url: Type.String(),
  options: AuditOptions,
}

/** Passed back as cursor for the next page; null on the last (Cursor says so to the caller). */
export const NextCursor = Nullable(Type.String())

/**
 * A result that is one of several object shapes. MCP requires an outputSchema of type "object" at the top,
 * which a bare anyOf lacks, so the union says it too.
 */
export const OneOfObjects = (members: TSchema[], description: string) => Type.Union(members, { type: 'object', description })

// ---- Target URLs without a scheme ----

/** Tool arguments that name a target to scan: a string, or a list of them. */
const TARGET_ARGS = ['url', 'urls'] as const

const HAS_SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/
/** `localhost:3000/x`: the WHATWG parser reads "localhost" as the scheme; a port number right after it says otherwise. */
const HOST_AND_PORT = /^[A-Za-z0-9.-]+:\d{1,5}(?:[/?#]|$)/
const LOCAL = /^(?:localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i

/**
 * The absolute URL a caller probably meant when `raw` has no scheme (example.com/path, localhost:3000,
 * //example.com): https://, or http:// for a loopback host, where local development servers rarely speak TLS.
 * Null when `raw` has a scheme or would not be a URL even with one. Nothing is scanned on a guess: the caller
 * gets this back as a suggestion and sends it.
 */
export function suggestScheme(raw: string): string | null {
  const s = raw.trim()
  if (s === '' || (HAS_SCHEME.test(s) && !HOST_AND_PORT.test(s))) return null
  const rest = s.replace(/^\/\//, '')
  let url: URL
  try {
    url = new URL(`https://${rest}`)
  } catch {
    return null
  }
  if (url.username !== '' || url.password !== '') return null
  // A host without a dot is only a guess worth making for localhost: "not a url" is not a site name.
  if (!url.hostname.includes('.') && !LOCAL.test(url.hostname)) return null
  if (LOCAL.test(url.hostname)) url = new URL(`http://${rest}`)
  return url.href
}

export interface SchemelessUrl {
  /** JSON Pointer of the argument, e.g. /url or /urls/2. */
  path: string
  value: string
  suggestion: string
}

/**
 * Each target-URL string of a tool's arguments (url, or each entry of urls) with its JSON pointer and, for a
 * list entry, how a message names it (urls[1]).
 */
export function* targetUrls(args: unknown): Generator<{ value: string; path: string; entry: string | null }> {
  if (typeof args !== 'object' || args === null) return
  for (const key of TARGET_ARGS) {
    const v = (args as Record<string, unknown>)[key]
    const list = Array.isArray(v) ? v.map((x, i) => [x, i] as const) : [[v, null] as const]
    for (const [value, i] of list) {
      if (typeof value === 'string')
        yield { value, path: i === null ? `/${key}` : `/${key}/${i}`, entry: i === null ? null : `${key}[${i}]` }
    }
  }
}

/** The first target-URL argument written without a scheme, with what to send instead; null when there is none. */
export function findSchemelessUrl(args: unknown): SchemelessUrl | null {
  for (const { value, path } of targetUrls(args)) {
    const suggestion = suggestScheme(value)
    if (suggestion) return { path, value, suggestion }
  }
  return null
}
