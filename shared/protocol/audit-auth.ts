// What an authenticated audit (audit_authenticated) carries to get past a login: cookies, request headers,
// or a login form to fill. Validated here once, sealed with AES-GCM (shared/lib/secret-box.ts) bound to the audit,
// opened only by the crawler that runs the audit, and wiped from the database when the audit ends. Every
// value in it is a secret: secretsOf() lists them so that whatever the crawl records (errors, evidence, logs)
// is scrubbed of them before it is written anywhere.
import { AppError } from '../errors.ts'

export interface AuthCookie {
  name: string
  value: string
  /** The host or a parent domain of it; absent: the start URL's host only. */
  domain?: string
}

export interface LoginForm {
  /** The login page, on the audited origin. */
  url: string
  /** CSS selector (or a bare field name) -> the value to type into it. */
  fields: Record<string, string>
  /** The button to click; absent: the form's submit button. */
  submit?: string
}

export interface AuditAuth {
  cookies?: AuthCookie[]
  headers?: Record<string, string>
  login?: LoginForm
}

export const AUTH_LIMITS = {
  cookies: 50,
  headers: 20,
  fields: 10,
  valueChars: 4096,
  selectorChars: 200,
  /** Shorter secrets are still used, but not scrubbed from text: a two-letter value would scrub ordinary words. */
  scrubMinChars: 6,
} as const

/** The AES-GCM additional data of an audit's sealed credentials: they open for that audit only. */
export const authPurpose = (auditId: string) => `audit-auth:${auditId}`

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
/** Headers the browser or the connection owns, and Cookie (pass cookies instead). */
const FORBIDDEN_HEADERS = new Set([
  'host',
  'content-length',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'cookie',
])
const COOKIE_VALUE = /^[\x21-\x7e]*$/
const DEFAULT_SUBMIT = 'button[type=submit], input[type=submit]'

const bad = (path: string, message: string): never => {
  throw new AppError('invalid_params', `${path.slice(1).replaceAll('/', '.')}: ${message}`, { details: [{ path, message }] })
}

/**
 * Checks what the caller sent against the audited URL and returns it normalised (login fields as selectors,
 * the submit button defaulted); invalid_params naming the first problem, never echoing a value.
 */
export function validateAuth(raw: AuditAuth, start: URL): AuditAuth {
  const out: AuditAuth = {}
  if (!raw.cookies?.length && !raw.headers && !raw.login) {
    bad('/cookies', 'pass cookies, headers or login: what gets the crawler past the login')
  }
  if (raw.cookies) {
    if (raw.cookies.length > AUTH_LIMITS.cookies) bad('/cookies', `at most ${AUTH_LIMITS.cookies} cookies`)
    out.cookies = raw.cookies.map((c, i) => {
      if (!TOKEN.test(c.name)) bad(`/cookies/${i}/name`, "not a cookie name (letters, digits and !#$%&'*+.^_`|~-)")
      if (!COOKIE_VALUE.test(c.value) || c.value.includes(';') || c.value.includes(',')) {
        bad(`/cookies/${i}/value`, 'a cookie value is printable ASCII without spaces, commas or semicolons')
      }
      if (c.domain !== undefined) {
        const d = c.domain.replace(/^\./, '').toLowerCase()
        const host = start.hostname.toLowerCase()
        if (d !== host && !(d.includes('.') && host.endsWith(`.${d}`))) {
          bad(`/cookies/${i}/domain`, `must be ${host} or a parent domain of it: credentials go to the audited site only`)
        }
        return { name: c.name, value: c.value, domain: d }
      }
      return { name: c.name, value: c.value }
    })
  }
  if (raw.headers) {
    const entries = Object.entries(raw.headers)
    if (entries.length > AUTH_LIMITS.headers) bad('/headers', `at most ${AUTH_LIMITS.headers} headers`)
    const headers: Record<string, string> = {}
    for (const [name, value] of entries) {
      const lower = name.toLowerCase()
      if (!TOKEN.test(name)) bad(`/headers/${name}`, 'not a header name')
      if (FORBIDDEN_HEADERS.has(lower) || lower.startsWith('proxy-') || lower.startsWith('sec-')) {
        bad(`/headers/${name}`, lower === 'cookie' ? 'pass cookies in cookies, not as a header' : 'this header is set by the browser')
      }
      if (/[\r\n\0]/.test(value) || value.length > AUTH_LIMITS.valueChars) bad(`/headers/${name}`, 'a header value is one line')
      headers[lower] = value
    }
    out.headers = headers
  }
  if (raw.login) {
    let loginUrl: URL | null = null
    try {
      loginUrl = new URL(raw.login.url)
    } catch {
      bad('/login/url', 'not an absolute URL')
    }
    if (loginUrl!.origin !== start.origin) bad('/login/url', `must be on ${start.origin}, the audited origin`)
    const entries = Object.entries(raw.login.fields ?? {})
    if (entries.length === 0 || entries.length > AUTH_LIMITS.fields) bad('/login/fields', `1 to ${AUTH_LIMITS.fields} fields`)
    const fields: Record<string, string> = {}
    for (const [key, value] of entries) {
      if (key.length === 0 || key.length > AUTH_LIMITS.selectorChars) bad('/login/fields', 'a field is a CSS selector or a field name')
      if (value.length > AUTH_LIMITS.valueChars) bad('/login/fields', `a value is at most ${AUTH_LIMITS.valueChars} characters`)
      // A bare name (username, user[email]) means the field of that name.
      fields[/^[\w[\].-]+$/.test(key) ? `[name="${key}"]` : key] = value
    }
    const submit = raw.login.submit ?? DEFAULT_SUBMIT
    if (submit.length === 0 || submit.length > AUTH_LIMITS.selectorChars) bad('/login/submit', 'a CSS selector')
    out.login = { url: loginUrl!.href, fields, submit }
  }
  return out
}

/**
 * Every secret value the credentials hold, longest first (so a value inside another is scrubbed after it):
 * the values themselves, a bearer token alone, and the base64 of each pair of login values (a site may
 * echo `user:password` as HTTP Basic credentials).
 */
export function secretsOf(auth: AuditAuth): string[] {
  const all = [
    ...(auth.cookies ?? []).map((c) => c.value),
    ...Object.values(auth.headers ?? {}),
    ...Object.values(auth.login?.fields ?? {}),
  ]
  // A header value like "Bearer abc..." is scrubbed whole and by its last word (the token alone).
  for (const v of Object.values(auth.headers ?? {})) {
    const last = v.trim().split(/\s+/).at(-1)
    if (last && last !== v) all.push(last)
  }
  const fields = Object.values(auth.login?.fields ?? {})
  for (const a of fields) for (const b of fields) if (a !== b) all.push(Buffer.from(`${a}:${b}`).toString('base64'))
  return [...new Set(all.filter((s) => s.length >= AUTH_LIMITS.scrubMinChars))].sort((a, b) => b.length - a.length)
}

export const REDACTED = '[redacted]'

const lowerHex = (s: string) => s.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase())

/**
 * The forms a secret takes on its way through what a crawl records: percent-encoded (as a path or query
 * part, as a form value with + for spaces, twice over; upper- and lower-case hex), HTML-escaped, escaped
 * inside a JSON string (with \/ and \u00XX as some servers write them), and base64.
 */
export function encodedForms(secret: string): string[] {
  const percent = encodeURIComponent(secret)
  const form = new URLSearchParams({ s: secret }).toString().slice(2)
  const uri = encodeURI(secret)
  const html = Bun.escapeHTML(secret)
  const json = JSON.stringify(secret).slice(1, -1)
  const bytes = Buffer.from(secret)
  const forms = [
    secret,
    ...[percent, form, uri, encodeURIComponent(percent)].flatMap((f) => [f, lowerHex(f)]),
    html,
    html.replaceAll('&#x27;', '&#39;'),
    json,
    json.replaceAll('/', '\\/'),
    json.replace(/[<>&']/g, (c) => `\\u00${c.charCodeAt(0).toString(16)}`),
    bytes.toString('base64'),
    bytes.toString('base64').replace(/=+$/, ''),
    bytes.toString('base64url'),
  ]
  return [...new Set(forms)]
}

/** Replaces every secret, in every form encodedForms() knows, in a string. */
export function scrubber(secrets: string[]): (s: string) => string {
  if (secrets.length === 0) return (s) => s
  const forms = [...new Set(secrets.flatMap(encodedForms))]
    .filter((f) => f.length >= AUTH_LIMITS.scrubMinChars)
    .sort((a, b) => b.length - a.length)
  return (s) => {
    let out = s
    for (const form of forms) if (out.includes(form)) out = out.replaceAll(form, REDACTED)
    return out
  }
}

/** Replaces every secret in every string of a JSON-like value. */
export function scrubDeep<T>(value: T, scrub: (s: string) => string): T {
  if (typeof value === 'string') return scrub(value) as T
  if (Array.isArray(value)) return value.map((v) => scrubDeep(v, scrub)) as T
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) out[scrub(k)] = scrubDeep(v, scrub)
    return out as T
  }
  return value
}

const LOGOUT = /(?:^|[/_.\-?=&])(?:log[-_]?out|sign[-_]?out|log[-_]?off|sign[-_]?off|end[-_]?session)(?:$|[/_.\-?=&])/i

/**
 * A link that would end the session: never followed in an authenticated audit. A page whose slug only mentions
 * logging out is skipped too: one page missed costs less than a session ended.
 */
export function isLogoutUrl(u: URL): boolean {
  return LOGOUT.test(u.pathname) || LOGOUT.test(u.search)
}

const LOGIN = /(?:^|[/_.-])(?:log[-_]?in|sign[-_]?in|auth(?:enticate)?|session\/new)(?:$|[/_.-])/i

/**
 * Whether a page that was asked for `requested` and ended at `final` was sent to a login page: the session
 * is gone. With a login form, its page is the login page; otherwise a redirect to a path that names one.
 */
export function sentToLogin(requested: string, final: string, loginUrl?: string): boolean {
  let req: URL
  let fin: URL
  try {
    req = new URL(requested)
    fin = new URL(final)
  } catch {
    return false
  }
  const path = (u: URL) => u.pathname.replace(/\/+$/, '') || '/'
  if (path(req) === path(fin)) return false
  if (loginUrl) {
    const login = new URL(loginUrl)
    if (fin.origin === login.origin && path(fin) === path(login)) return true
  }
  // Without a login form: a redirect to a page that names a login, from one that did not (a page under
  // /docs/auth moving within it is not a lost session).
  return LOGIN.test(fin.pathname) && !LOGIN.test(req.pathname)
}
