// The Content-Security-Policy to advise, built from what the scanned page really has: a 'sha256-...' hash for
// each inline script it runs (or a nonce recipe when there are many or they change from one response to the
// next), the origins its scripts, styles, images, fonts, frames and connections load from, 'self', and a
// strict base (object-src 'none', base-uri 'self', frame-ancestors). Never 'unsafe-inline' for scripts.
// Used by the csp check (its advice) and by configuration patches. Every source that reaches a policy is
// validated here, so nothing a site serves can inject text into a header or a configuration file.
import { createHash } from 'node:crypto'
import type { BrowserRequest, InlineCode, InlineItem, Platform } from '../types.ts'
import { headerFixes } from './fix.ts'

/** What the policy is built from: the csp check's evidence.pageSources, stored with the report. */
export interface PageSources {
  /** The page the sources were read on. */
  page: string
  /** Cross-origin origins per fetch directive (script-src, style-src, img-src, font-src, connect-src, frame-src, media-src, manifest-src). */
  origins: Record<string, string[]>
  scripts: {
    /** 'sha256-...' of each executable inline script, at most MAX_SCRIPT_HASHES. */
    hashes: string[]
    count: number
    /** Inline scripts whose text the server did not send as it is in the page's HTML (made per response, or by other scripts). */
    dynamic: number
    /** Inline scripts that already carry a nonce attribute. */
    nonced: number
  }
  handlers: { count: number; names: string[]; hashes: string[] }
  styles: { count: number; hashes: string[] }
  styleAttributes: { count: number; hashes: string[] }
}

export interface CspAdvice {
  /** The policy to send; in nonce mode it holds the placeholder {NONCE}, a fresh random value for each response. */
  policy: string
  mode: 'hashes' | 'nonce'
  /** What the policy allows beyond the site itself, what it cannot allow, and how to roll it out. */
  notes: string[]
}

export const CSP_LIMITS = {
  /** Inline scripts to allow by hash; more than this and a nonce is the maintainable way. */
  scriptHashes: 15,
  handlerHashes: 10,
  styleHashes: 10,
  styleAttributeHashes: 10,
  originsPerDirective: 20,
}

const HOST =
  /^(?:(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?|\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-f:.]{2,45}\])$/
const HASH = /^'sha256-[A-Za-z0-9+/]{43}='$/

/** A URL's origin when it is a plain http(s)/ws(s) origin that is safe to write into a policy; else null. */
export function safeOrigin(url: string): string | null {
  let u: URL
  try {
    u = new URL(url)
  } catch {
    return null
  }
  if (!['http:', 'https:', 'ws:', 'wss:'].includes(u.protocol) || !HOST.test(u.hostname)) return null
  return `${u.protocol}//${u.hostname}${u.port ? `:${u.port}` : ''}`
}

/** The CSP hash source of a piece of inline code: base64 SHA-256 of its UTF-8 text. */
export function cspHash(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`
}

/** Chromium's resource types to the directive that governs them. */
export const DIRECTIVE_OF: Record<string, string> = {
  script: 'script-src',
  stylesheet: 'style-src',
  font: 'font-src',
  image: 'img-src',
  media: 'media-src',
  xhr: 'connect-src',
  fetch: 'connect-src',
  websocket: 'connect-src',
  eventsource: 'connect-src',
  document: 'frame-src',
  subdocument: 'frame-src',
  manifest: 'manifest-src',
}

const normalise = (s: string) => s.replace(/\r\n?/g, '\n')

/**
 * Reads the page's sources from what the gatherer recorded: the requests it made, its inline code, and the
 * HTML the server sent (to tell inline scripts the server sends as they are from ones made per response).
 */
export function pageSources(input: {
  pageUrl: string
  requests: readonly BrowserRequest[]
  inline: InlineCode | undefined
  /** The page's HTML as the server sent it over plain HTTP, when it is the same document. */
  serverHtml: string | null
  /** Origins that count as the site itself besides the page's (the start URL before redirects). */
  selfOrigins?: readonly string[]
}): PageSources {
  const self = new Set([safeOrigin(input.pageUrl), ...(input.selfOrigins ?? []).map(safeOrigin)].filter((o): o is string => o !== null))
  const origins: Record<string, string[]> = {}
  for (const r of input.requests) {
    const directive = DIRECTIVE_OF[r.resourceType]
    const origin = safeOrigin(r.url)
    if (!directive || !origin || self.has(origin)) continue
    // A document request to another origin that redirected is the page's own navigation, not a frame.
    if (directive === 'frame-src' && r.status >= 300 && r.status < 400) continue
    const list = (origins[directive] ??= [])
    if (!list.includes(origin) && list.length < CSP_LIMITS.originsPerDirective) list.push(origin)
  }
  const inline = input.inline
  const html = input.serverHtml === null ? null : normalise(input.serverHtml)
  const scripts = inline?.scripts ?? []
  const dynamic = html === null ? 0 : scripts.filter((s) => !html.includes(normalise(s.text))).length
  const hashes = (items: InlineItem[], max: number) => [...new Set(items.map((i) => `'sha256-${i.sha256}'`))].slice(0, max)
  return {
    page: input.pageUrl,
    origins,
    scripts: {
      hashes: hashes(scripts, CSP_LIMITS.scriptHashes + 1),
      count: inline?.scriptCount ?? 0,
      dynamic,
      nonced: scripts.filter((s) => s.nonce).length,
    },
    handlers: {
      count: inline?.handlerCount ?? 0,
      names: (inline?.handlerNames ?? []).slice(0, 10),
      hashes: hashes(inline?.handlers ?? [], CSP_LIMITS.handlerHashes + 1),
    },
    styles: { count: inline?.styleCount ?? 0, hashes: hashes(inline?.styles ?? [], CSP_LIMITS.styleHashes + 1) },
    styleAttributes: {
      count: inline?.styleAttributeCount ?? 0,
      hashes: hashes(inline?.styleAttributes ?? [], CSP_LIMITS.styleAttributeHashes + 1),
    },
  }
}

const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.floor(v) : 0)
const strings = (v: unknown, ok: (s: string) => boolean, max: number) =>
  Array.isArray(v) ? [...new Set(v.filter((s): s is string => typeof s === 'string' && ok(s)))].slice(0, max) : []

/** Stored evidence read back as PageSources, every value re-validated (reports are data, not code); null when absent. */
export function asPageSources(value: unknown): PageSources | null {
  if (!value || typeof value !== 'object') return null
  const at = (obj: unknown, key: string): unknown => (obj && typeof obj === 'object' ? (obj as Record<string, unknown>)[key] : undefined)
  const origins: Record<string, string[]> = {}
  for (const directive of new Set(Object.values(DIRECTIVE_OF))) {
    const list = strings(at(at(value, 'origins'), directive), (s) => safeOrigin(s) === s, CSP_LIMITS.originsPerDirective)
    if (list.length) origins[directive] = list
  }
  const isHash = (s: string) => HASH.test(s)
  const part = (key: string, max: number) => ({
    count: num(at(at(value, key), 'count')),
    hashes: strings(at(at(value, key), 'hashes'), isHash, max + 1),
  })
  const page = at(value, 'page')
  return {
    page: typeof page === 'string' ? page : '',
    origins,
    scripts: {
      ...part('scripts', CSP_LIMITS.scriptHashes),
      dynamic: num(at(at(value, 'scripts'), 'dynamic')),
      nonced: num(at(at(value, 'scripts'), 'nonced')),
    },
    handlers: {
      ...part('handlers', CSP_LIMITS.handlerHashes),
      names: strings(at(at(value, 'handlers'), 'names'), (s) => /^on[a-z]{1,30}$/.test(s), 10),
    },
    styles: part('styles', CSP_LIMITS.styleHashes),
    styleAttributes: part('styleAttributes', CSP_LIMITS.styleAttributeHashes),
  }
}

/** Whether the page's inline scripts are better allowed by a nonce than by hashes, and why. */
function nonceReason(s: PageSources): string | null {
  if (s.scripts.count > CSP_LIMITS.scriptHashes)
    return `The page has ${s.scripts.count} inline scripts: more than ${CSP_LIMITS.scriptHashes} hashes are hard to keep in step with the code.`
  if (s.scripts.dynamic > 0)
    return `${s.scripts.dynamic} inline script(s) are not in the HTML the server sends as they run (made for each response, or added by other scripts): their hashes would change.`
  if (s.scripts.nonced > 0) return 'The page already puts nonce attributes on its inline scripts.'
  return null
}

/** Builds the policy from a page's sources (or an audit's, merged with mergePageSources). */
export function buildCsp(s: PageSources, opts: { allowNonce?: boolean; reportOnlySent?: boolean } = {}): CspAdvice {
  const reason = nonceReason(s)
  // A static configuration file (a patch) cannot make nonces: it gets the hashes, and says why they may not last.
  const nonce = opts.allowNonce === false ? null : reason
  const script = scriptSources(s, nonce)
  const style = styleSources(s)
  const notes = [
    originsNote(s),
    ...inlineScriptsNote(s, nonce),
    ...(reason && !nonce
      ? [`${reason} A server configuration cannot make a nonce: move them into script files, or send the policy from the app with a nonce.`]
      : []),
    ...script.notes,
    ...style.notes,
    "frame-ancestors 'self' lets only the site frame its pages; use 'none' if it never frames itself.",
    opts.reportOnlySent
      ? 'The site already sends Content-Security-Policy-Report-Only: compare its violation reports with this policy, then send it as Content-Security-Policy.'
      : 'Try it first as Content-Security-Policy-Report-Only on every page and watch the browser console, then enforce it.',
  ]
  return { policy: directivesOf(s, script.sources, style.sources).join('; '), mode: nonce ? 'nonce' : 'hashes', notes }
}

/** script-src: the site, the script origins, the nonce or the inline scripts' hashes, and a few inline handlers by hash. */
function scriptSources(s: PageSources, nonce: string | null): { sources: string[]; notes: string[] } {
  const sources = ["'self'", ...(s.origins['script-src'] ?? [])]
  const notes: string[] = []
  if (nonce) sources.push("'nonce-{NONCE}'")
  else sources.push(...s.scripts.hashes)
  // Inline event handlers run only with 'unsafe-hashes' and their own hashes; a few are allowed that way.
  if (s.handlers.count > 0) {
    const names = s.handlers.names.length ? ` (${s.handlers.names.join(', ')})` : ''
    if (s.handlers.hashes.length > 0 && s.handlers.hashes.length <= CSP_LIMITS.handlerHashes) {
      sources.push("'unsafe-hashes'", ...s.handlers.hashes)
      notes.push(
        `${s.handlers.count} element(s) use inline event handler attributes${names}: they are allowed by hash with 'unsafe-hashes'. ` +
          "Better: move them to addEventListener in a script file and drop 'unsafe-hashes' and their hashes.",
      )
    } else {
      notes.push(
        `${s.handlers.count} element(s) use inline event handler attributes${names}, too many different ones to allow by hash: this ` +
          "policy blocks them. Move them to addEventListener in a script file (or allow each with 'unsafe-hashes' and its hash).",
      )
    }
  }
  return { sources, notes }
}

/** style-src: the site, the style origins, and the inline styles and style attributes by hash, or 'unsafe-inline'
 * when there are too many of them. */
function styleSources(s: PageSources): { sources: string[]; notes: string[] } {
  const origins = s.origins['style-src'] ?? []
  const notes: string[] = []
  const hashes = [...s.styles.hashes]
  let unsafeHashes = false
  let inline = s.styles.hashes.length > CSP_LIMITS.styleHashes
  if (s.styleAttributes.count > 0) {
    if (s.styleAttributes.hashes.length <= CSP_LIMITS.styleAttributeHashes) {
      unsafeHashes = true
      hashes.push(...s.styleAttributes.hashes)
      notes.push(
        `${s.styleAttributes.count} element(s) have inline style attributes: their values are allowed by hash with 'unsafe-hashes'. ` +
          'A changed value needs its new hash; moving them into a stylesheet is simpler.',
      )
    } else {
      inline = true
      notes.push(
        `${s.styleAttributes.count} element(s) have many different inline style attributes: style-src keeps 'unsafe-inline' (styles only; ` +
          'scripts stay strict). Move them into a stylesheet to drop it.',
      )
    }
  }
  // A hash or nonce in style-src disables 'unsafe-inline' there, so it is one or the other.
  const sources = inline
    ? ["'self'", ...origins, "'unsafe-inline'"]
    : ["'self'", ...origins, ...(unsafeHashes ? ["'unsafe-hashes'"] : []), ...hashes]
  return { sources, notes }
}

function directivesOf(s: PageSources, script: string[], style: string[]): string[] {
  const from = (directive: string) => s.origins[directive] ?? []
  const optional = (directive: string) => (from(directive).length ? [`${directive} ${["'self'", ...from(directive)].join(' ')}`] : [])
  return [
    "default-src 'self'",
    `script-src ${script.join(' ')}`,
    `style-src ${style.join(' ')}`,
    `img-src ${["'self'", 'data:', ...from('img-src')].join(' ')}`,
    `font-src ${["'self'", ...from('font-src')].join(' ')}`,
    `connect-src ${["'self'", ...from('connect-src')].join(' ')}`,
    ...optional('frame-src'),
    ...optional('media-src'),
    ...optional('manifest-src'),
    "object-src 'none'",
    "base-uri 'self'",
    "frame-ancestors 'self'",
  ]
}

function originsNote(s: PageSources): string {
  const others = new Set(Object.values(s.origins).flat()).size
  return others > 0
    ? `Allows the ${others} other origin(s) the page loaded from when it was scanned; pages that load from others need them added.`
    : 'The page loaded nothing from other origins when it was scanned, so the policy allows only the site itself.'
}

/** How the policy allows the page's inline scripts: by a nonce (and why), or by their hashes. */
function inlineScriptsNote(s: PageSources, nonce: string | null): string[] {
  if (nonce)
    return [
      `${nonce} Use a nonce: make a fresh random value (16 bytes, base64) for each response, put it in the header in place of {NONCE} and ` +
        'on every inline <script> as nonce="...".',
    ]
  if (s.scripts.hashes.length > 0)
    return [
      `Allows the page's ${s.scripts.hashes.length} inline script(s) by their SHA-256 hash: a script whose text changes needs its new hash ` +
        '(the browser console names it when it blocks one).',
    ]
  return []
}

/** How to make a fresh nonce for each response, on the platforms whose app renders the page. */
const NONCE_RECIPES: Partial<Record<Platform, string>> = {
  express: [
    'In the Express app, before the routes (crypto is node:crypto); render nonce="<%= cspNonce %>" (or your template\'s form) on each inline <script>:',
    'app.use((req, res, next) => {',
    "  res.locals.cspNonce = crypto.randomBytes(16).toString('base64')",
    "  res.setHeader('Content-Security-Policy', POLICY.replaceAll('{NONCE}', res.locals.cspNonce))",
    '  next()',
    '})',
  ].join('\n'),
  django: [
    'With django-csp 4, in settings.py put csp.constants.NONCE in "script-src" instead of the \'nonce-{NONCE}\' source:',
    'from csp.constants import NONCE, SELF',
    'and in templates: <script nonce="{{ request.csp_nonce }}">',
  ].join('\n'),
  rails: [
    'In config/initializers/content_security_policy.rb, leave the nonce out of script_src and add:',
    'Rails.application.config.content_security_policy_nonce_generator = ->(request) { SecureRandom.base64(16) }',
    'Rails.application.config.content_security_policy_nonce_directives = %w[script-src]',
    'and in views: <%= javascript_tag nonce: true do %>...<% end %> (or nonce="<%= content_security_policy_nonce %>").',
  ].join('\n'),
  nextjs: [
    'In middleware.ts, make the nonce and send the policy on the request and the response (Next.js reads it and puts it on its own scripts):',
    "const nonce = Buffer.from(crypto.randomUUID()).toString('base64')",
    "const csp = POLICY.replaceAll('{NONCE}', nonce)",
    "const headers = new Headers(request.headers); headers.set('x-nonce', nonce); headers.set('Content-Security-Policy', csp)",
    "const response = NextResponse.next({ request: { headers } }); response.headers.set('Content-Security-Policy', csp); return response",
  ].join('\n'),
}

const STATIC_NONCE_NOTE =
  'A static server configuration cannot make a fresh nonce for each response: make it in the app that renders the page (and send ' +
  "the header from there), or move the inline scripts into files so 'self' covers them and use the hash policy."

/** The advice text for a computed policy on a platform: the policy, where and how to send it, and the notes. */
export function cspAdviceText(advice: CspAdvice, platform: Platform, page: string): string {
  const lines = [`Send this Content-Security-Policy, computed from what ${page || 'the scanned page'} loads and runs:`, advice.policy]
  if (advice.mode === 'nonce') {
    lines.push(
      NONCE_RECIPES[platform] ?? (platform === 'generic' ? 'Make the nonce in the code that renders the page.' : STATIC_NONCE_NOTE),
    )
  } else if (platform !== 'generic') {
    lines.push(headerFixes([{ key: 'Content-Security-Policy', value: advice.policy }])[platform])
  }
  lines.push(...advice.notes.map((n) => `- ${n}`))
  return lines.join('\n')
}

/**
 * Adds another page's cross-origin sources to `into` (an audit's CSP finding speaks for every page it was
 * found on, so its policy must allow what each of them loads and calls), bounded per directive.
 */
export function mergePageSources(into: unknown, from: unknown): void {
  const a = into && typeof into === 'object' ? (into as { origins?: unknown }).origins : null
  const b = from && typeof from === 'object' ? (from as { origins?: unknown }).origins : null
  if (!a || typeof a !== 'object' || !b || typeof b !== 'object') return
  const target = a as Record<string, unknown>
  for (const [directive, list] of Object.entries(b as Record<string, unknown>)) {
    if (!Array.isArray(list) || !Object.hasOwn(DIRECTIVE_NAMES, directive)) continue
    const have = Array.isArray(target[directive]) ? (target[directive] as unknown[]) : []
    for (const origin of list) {
      if (have.length >= CSP_LIMITS.originsPerDirective) break
      if (typeof origin === 'string' && safeOrigin(origin) === origin && !have.includes(origin)) have.push(origin)
    }
    target[directive] = have
  }
}

const DIRECTIVE_NAMES: Record<string, true> = Object.fromEntries(Object.values(DIRECTIVE_OF).map((d) => [d, true]))
