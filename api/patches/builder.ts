// Builds a configuration patch from a scan's or audit's findings: the response headers, the CSP (computed
// from what the page loaded), cookie attributes where the platform's configuration sets them, the http to
// https redirect and version disclosure, written into the file each platform reads. Pure: it sees the
// repository through `RepoView` (or nothing: then it writes new files in the platform's usual places) and
// returns whole-file edits plus what configuration cannot fix and why. diff.ts turns the edits into a
// unified diff.
//
// Nothing from the scanned site reaches a file unchecked: header values must be printable ASCII without
// quotes, backslashes, '$', '%', braces or backticks (nginx variables, Apache format strings, template
// strings), and paths read from a repository must be plain relative paths, so a hostile page or
// repository cannot inject lines into the diff or the configuration.
import { adviseCsp } from './csp-policy.ts'

export const PATCH_PLATFORMS = ['vercel', 'netlify', 'nextjs', 'nginx', 'apache', 'cloudflare', 'express'] as const
export type PatchPlatform = (typeof PATCH_PLATFORMS)[number]

export interface PatchFinding {
  checkId: string
  title: string
  severity: string
  status: string
  evidence: Record<string, unknown>
}

export interface PatchSource {
  /** The scanned page (its final URL); decides https-only headers. */
  url: string
  findings: PatchFinding[]
  /** Every check of the report (CSP sources are computed from the third-party requests). */
  checks: ReadonlyArray<{ id: string; status?: string; evidence?: Record<string, unknown> }>
}

/** A repository as the builder sees it: its file paths and their text. */
export interface RepoView {
  paths: readonly string[]
  read(path: string): string | null
}

export interface FileEdit {
  path: string
  /** null: the file is created. */
  before: string | null
  after: string
}

export interface Fixed {
  checkId: string
  title: string
  /** What the patch changes for it. */
  change: string
  /** How to check the fix once deployed. */
  verify: string
}

export interface NotFixed {
  checkId: string
  title: string
  why: string
}

export interface PatchPlan {
  platform: PatchPlatform
  edits: FileEdit[]
  fixed: Fixed[]
  notFixed: NotFixed[]
  notes: string[]
}

interface Header {
  key: string
  value: string
}

const SAFE_VALUE = /^[\x20-\x7e]{1,4000}$/
const UNSAFE_CHARS = /["\\$%`{}]/
export const isSafeHeaderValue = (v: string) => SAFE_VALUE.test(v) && !UNSAFE_CHARS.test(v)
const PATH_PART = /^[A-Za-z0-9._-]{1,100}$/
/** A plain relative path: at most 12 parts of letters, digits, '.', '_' and '-', none '.', '..' or '.git'. */
export const isSafePath = (p: string) => {
  const parts = p.split('/')
  return (
    p.length <= 250 && parts.length <= 12 && parts.every((x) => PATH_PART.test(x) && x !== '.' && x !== '..' && x.toLowerCase() !== '.git')
  )
}

const EMPTY_REPO: RepoView = { paths: [], read: () => null }

const HEADER_CHECKS: Record<string, (src: PatchSource) => Header[] | string> = {
  csp: (src) => [{ key: 'Content-Security-Policy', value: adviseCsp(src).policy }],
  'frame-protection': () => [{ key: 'X-Frame-Options', value: 'DENY' }],
  hsts: (src) =>
    src.url.startsWith('https://')
      ? [{ key: 'Strict-Transport-Security', value: 'max-age=63072000; includeSubDomains' }]
      : 'The page was served over http: HSTS is only honoured on https responses, so enable https first.',
  'x-content-type-options': () => [{ key: 'X-Content-Type-Options', value: 'nosniff' }],
  'referrer-policy': () => [{ key: 'Referrer-Policy', value: 'strict-origin-when-cross-origin' }],
  'permissions-policy': () => [{ key: 'Permissions-Policy', value: 'camera=(), microphone=(), geolocation=(), browsing-topics=()' }],
}
const COOKIE_CHECKS = ['cookie-secure', 'cookie-httponly', 'cookie-samesite'] as const
type CookieCheck = (typeof COOKIE_CHECKS)[number]

const sh = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`

function headerVerify(url: string, h: Header[]): string {
  return `curl -sI ${sh(url)} | grep -iE ${sh(`^(${h.map((x) => x.key).join('|')}):`)} prints ${h.map((x) => x.key).join(' and ')}; then run scan_app again.`
}

/** Why a finding that is not a header, cookie, redirect or version matter is not fixed by configuration. */
function whyNot(checkId: string): string {
  if (checkId.startsWith('exposed-') || checkId === 'directory-listing' || checkId === 'debug-error-page')
    return 'A file or page the app should not serve: remove it from what is deployed (and rotate any secret it held); a config rule would only hide content that has already been public.'
  if (checkId === 'js-secrets')
    return 'A secret in shipped JavaScript: revoke it at its provider and move it server-side; no configuration unpublishes it.'
  if (checkId === 'mixed-content') return 'The page itself links http:// resources: change those URLs in the code.'
  if (checkId === 'vulnerable-js-library')
    return 'Upgrade the library in package.json (or the script tag); configuration cannot patch its code.'
  if (checkId === 'subresource-integrity')
    return 'Integrity hashes belong on the <script> tags in the markup, not in the hosting configuration.'
  if (checkId === 'cors-credentialed-reflection')
    return 'The application code reflects Origin with credentials: fix the CORS allowlist in the code.'
  if (checkId.startsWith('tls-'))
    return 'Certificates and TLS versions are set where TLS ends (the host or load balancer), not in the repository.'
  if (checkId.startsWith('seo-') || checkId.startsWith('perf-') || checkId === 'accessibility')
    return 'A change to the pages themselves (markup, assets), not to the hosting configuration.'
  return 'Not something response configuration can change.'
}

interface Wanted {
  headers: Header[]
  headerFixes: Array<{ f: PatchFinding; h: Header[] }>
  version: PatchFinding | null
  redirect: PatchFinding | null
  cookies: Map<CookieCheck, PatchFinding>
}

function wanted(src: PatchSource, notFixed: NotFixed[], notes: string[]): Wanted {
  const w: Wanted = { headers: [], headerFixes: [], version: null, redirect: null, cookies: new Map() }
  const seen = new Set<string>()
  for (const f of src.findings) {
    if (f.status !== 'fail' && f.status !== 'warn') continue
    if (seen.has(f.checkId)) continue
    seen.add(f.checkId)
    const hf = HEADER_CHECKS[f.checkId]
    if (hf) {
      const got = hf(src)
      if (typeof got === 'string') {
        notFixed.push({ checkId: f.checkId, title: f.title, why: got })
        continue
      }
      const unsafe = got.filter((h) => !isSafeHeaderValue(h.value))
      if (unsafe.length) {
        notFixed.push({
          checkId: f.checkId,
          title: f.title,
          why: 'The computed header value holds characters a configuration file cannot carry safely.',
        })
        continue
      }
      w.headerFixes.push({ f, h: got })
      for (const h of got) if (!w.headers.some((x) => x.key === h.key)) w.headers.push(h)
      if (f.checkId === 'csp') notes.push(...adviseCsp(src).notes)
    } else if (f.checkId === 'version-disclosure') w.version = f
    else if (f.checkId === 'https-redirect') w.redirect = f
    else if ((COOKIE_CHECKS as readonly string[]).includes(f.checkId)) w.cookies.set(f.checkId as CookieCheck, f)
    else notFixed.push({ checkId: f.checkId, title: f.title, why: whyNot(f.checkId) })
  }
  return w
}

// ---------------------------------------------------------------------------------------------------
// Rendering per platform

const MARK = 'Added by App Audit'

class Plan {
  readonly edits = new Map<string, FileEdit>()
  readonly fixed: Fixed[] = []
  readonly notFixed: NotFixed[] = []
  readonly notes: string[] = []
  constructor(
    readonly repo: RepoView,
    readonly url: string,
  ) {}

  current(path: string): string | null {
    return this.edits.get(path)?.after ?? this.repo.read(path)
  }

  write(path: string, after: string): void {
    if (!isSafePath(path)) throw new Error(`unsafe path ${JSON.stringify(path)}`)
    const prev = this.edits.get(path)
    this.edits.set(path, { path, before: prev ? prev.before : this.repo.read(path), after })
  }

  fix(f: PatchFinding, change: string, verify: string): void {
    this.fixed.push({ checkId: f.checkId, title: f.title, change, verify })
  }

  cannot(f: PatchFinding, why: string): void {
    this.notFixed.push({ checkId: f.checkId, title: f.title, why })
  }

  fixHeaders(w: Wanted, where: string): void {
    for (const { f, h } of w.headerFixes)
      this.fix(f, `Sends ${h.map((x) => `${x.key}: ${x.value}`).join(', ')} (${where}).`, headerVerify(this.url, h))
  }

  cookiesInCode(w: Wanted, why: string): void {
    for (const f of w.cookies.values()) this.cannot(f, why)
  }
}

const withNewline = (s: string) => (s.endsWith('\n') || s === '' ? s : `${s}\n`)
const appendBlock = (before: string | null, block: string) => (before ? `${withNewline(before)}\n${block}` : block)
/** The first existing path among candidates, else the first candidate. */
const pick = (repo: RepoView, candidates: string[]) => candidates.find((p) => repo.read(p) !== null) ?? candidates[0]!
const findPaths = (repo: RepoView, re: RegExp, limit = 50) => repo.paths.filter((p) => re.test(p) && isSafePath(p)).slice(0, limit)

function vercel(p: Plan, w: Wanted): void {
  const path = 'vercel.json'
  if (w.headers.length) {
    const before = p.current(path)
    let doc: Record<string, unknown> = {}
    let ok = true
    if (before !== null) {
      try {
        const parsed = JSON.parse(before)
        if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) doc = parsed
        else ok = false
      } catch {
        ok = false
      }
    }
    if (!ok) {
      for (const { f } of w.headerFixes) p.cannot(f, 'vercel.json is not a JSON object, so it cannot be edited safely: fix it first.')
    } else {
      const rules = Array.isArray(doc.headers) ? [...(doc.headers as unknown[])] : []
      const idx = rules.findIndex(
        (r) => (r as { source?: unknown })?.source === '/(.*)' && Array.isArray((r as { headers?: unknown }).headers),
      )
      if (idx >= 0) {
        const rule = rules[idx] as { source: string; headers: Header[] }
        const kept = rule.headers.filter((x) => !w.headers.some((h) => h.key.toLowerCase() === String(x?.key).toLowerCase()))
        rules[idx] = { ...rule, headers: [...kept, ...w.headers] }
      } else rules.push({ source: '/(.*)', headers: w.headers })
      doc.headers = rules
      p.write(path, `${JSON.stringify(doc, null, 2)}\n`)
      p.fixHeaders(w, 'vercel.json headers, every path')
    }
  }
  if (w.redirect)
    p.cannot(
      w.redirect,
      'Vercel redirects http to https itself on its domains; for a custom domain, check it is added in the project settings.',
    )
  if (w.version)
    p.cannot(
      w.version,
      'Vercel sets its own Server header; an X-Powered-By: Next.js header goes away with poweredByHeader: false in next.config.js.',
    )
  p.cookiesInCode(w, 'Cookies on Vercel are set by the application code (res.cookie / cookies().set): add the attribute there.')
}

function headersFileBlock(headers: Header[]): string {
  return `# ${MARK}: security headers on every path\n/*\n${headers.map((h) => `  ${h.key}: ${h.value}`).join('\n')}\n`
}

function netlify(p: Plan, w: Wanted): void {
  if (w.headers.length) {
    const toml = p.current('netlify.toml')
    const existingHeadersFile = ['_headers', 'public/_headers', 'static/_headers'].find((x) => p.current(x) !== null)
    if (toml !== null || !existingHeadersFile) {
      const block = [
        `# ${MARK}: security headers on every path`,
        '[[headers]]',
        '  for = "/*"',
        '  [headers.values]',
        ...w.headers.map((h) => `    ${h.key} = ${JSON.stringify(h.value)}`),
        '',
      ].join('\n')
      p.write('netlify.toml', appendBlock(toml, block))
      p.fixHeaders(w, 'netlify.toml [[headers]], every path')
    } else {
      p.write(existingHeadersFile, appendBlock(p.current(existingHeadersFile), headersFileBlock(w.headers)))
      p.fixHeaders(w, `${existingHeadersFile}, every path`)
    }
  }
  if (w.redirect)
    p.cannot(w.redirect, 'Netlify redirects http to https itself once the domain has a certificate (Domain settings > HTTPS).')
  if (w.version) p.cannot(w.version, "Netlify's own Server header cannot be removed from configuration.")
  p.cookiesInCode(w, 'Cookies on Netlify are set by the functions or the application code: add the attribute where they are set.')
}

function cloudflare(p: Plan, w: Wanted): void {
  if (w.headers.length) {
    const path = pick(
      p.repo,
      ['public/_headers', 'static/_headers', 'dist/_headers', '_headers']
        .filter((x) => p.repo.read(x) !== null)
        .concat(p.repo.paths.some((x) => x.startsWith('public/')) ? ['public/_headers'] : ['_headers']),
    )
    p.write(path, appendBlock(p.current(path), headersFileBlock(w.headers)))
    p.fixHeaders(w, `${path} (Cloudflare Pages), every path`)
  }
  if (w.redirect) p.cannot(w.redirect, 'A dashboard setting: SSL/TLS > Edge Certificates > Always Use HTTPS.')
  if (w.version)
    p.cannot(w.version, 'Set by the origin behind Cloudflare, or by Cloudflare itself: remove it at the origin, or with a Transform Rule.')
  p.cookiesInCode(w, 'Cookies are set by the application (or a Worker): add the attribute where they are set.')
}

const NEXT_CONFIGS = ['next.config.js', 'next.config.mjs', 'next.config.ts', 'next.config.cjs']

function nextHeadersSnippet(headers: Header[], indent: string): string {
  return [
    `${indent}// ${MARK}: security headers on every path`,
    `${indent}async headers() {`,
    `${indent}  return [`,
    `${indent}    {`,
    `${indent}      source: '/:path*',`,
    `${indent}      headers: [`,
    ...headers.map((h) => `${indent}        { key: ${JSON.stringify(h.key)}, value: ${JSON.stringify(h.value)} },`),
    `${indent}      ],`,
    `${indent}    },`,
    `${indent}  ]`,
    `${indent}},`,
  ].join('\n')
}

function nextjs(p: Plan, w: Wanted): void {
  const poweredBy = w.version && JSON.stringify(w.version.evidence).toLowerCase().includes('next.js')
  const path = NEXT_CONFIGS.find((x) => p.current(x) !== null)
  const before = path ? p.current(path)! : null
  const inserts: string[] = []
  if (w.headers.length) inserts.push(nextHeadersSnippet(w.headers, '  '))
  if (poweredBy && !(before ?? '').includes('poweredByHeader')) inserts.push('  poweredByHeader: false,')
  if (inserts.length) {
    if (before === null) {
      p.write('next.config.js', `/** @type {import('next').NextConfig} */\nmodule.exports = {\n${inserts.join('\n')}\n}\n`)
      applied('next.config.js')
    } else if (w.headers.length && /\bheaders\s*\(/.test(before)) {
      for (const { f } of w.headerFixes)
        p.cannot(f, `${path} already defines headers(): add ${f.checkId === 'csp' ? 'the policy' : 'the header'} to its list by hand.`)
      if (poweredBy && w.version) p.cannot(w.version, `Add poweredByHeader: false to ${path}.`)
    } else {
      const m =
        /(?:^|\n)\s*(?:const|let|var)\s+\w+\s*(?::\s*[\w.]+\s*)?=\s*\{/.exec(before) ??
        /module\.exports\s*=\s*\{/.exec(before) ??
        /export\s+default\s+\{/.exec(before) ??
        /(?:module\.exports\s*=|export\s+default)\s*\w+\(\s*\{/.exec(before)
      if (!m) {
        for (const { f } of w.headerFixes)
          p.cannot(f, `${path} has a shape the patch does not recognise: add an async headers() to its config object.`)
        if (poweredBy && w.version) p.cannot(w.version, `Add poweredByHeader: false to ${path}.`)
      } else {
        const at = m.index + m[0].length
        p.write(path!, `${before.slice(0, at)}\n${inserts.join('\n')}${before.slice(at)}`)
        applied(path!)
      }
    }
  }
  function applied(file: string) {
    if (w.headers.length) p.fixHeaders(w, `${file} headers(), every path`)
    if (poweredBy && w.version)
      p.fix(
        w.version,
        `poweredByHeader: false in ${file} drops X-Powered-By: Next.js.`,
        `curl -sI ${sh(p.url)} | grep -i '^x-powered-by:' prints nothing.`,
      )
  }
  if (w.version && !poweredBy)
    p.cannot(w.version, 'The version comes from the server in front of Next.js (its Server header): turn it off there.')
  if (w.redirect) p.cannot(w.redirect, 'Next.js does not terminate TLS: redirect http to https on the host or proxy in front of it.')
  p.cookiesInCode(w, 'Next.js sets cookies in code (cookies().set, res.setHeader): pass the attribute there.')
}

/** Positions just after each `server {` line, with the block's text up to its closing brace (brace-counted). */
function serverBlocks(text: string): Array<{ insertAt: number; indent: string; body: string }> {
  const out: Array<{ insertAt: number; indent: string; body: string }> = []
  const re = /^([ \t]*)server\s*\{[ \t]*(?:#.*)?$/gm
  for (let m = re.exec(text); m && out.length < 50; m = re.exec(text)) {
    const open = text.indexOf('{', m.index)
    let depth = 0
    let end = text.length
    for (let i = open; i < text.length; i++) {
      if (text[i] === '{') depth++
      else if (text[i] === '}' && --depth === 0) {
        end = i
        break
      }
    }
    out.push({ insertAt: m.index + m[0].length, indent: `${m[1]}    `, body: text.slice(open + 1, end) })
  }
  return out
}

function nginx(p: Plan, w: Wanted): void {
  const files = findPaths(p.repo, /(?:^|\/)(?:nginx\.conf|[\w.-]+\.conf)$/).filter((f) => serverBlocks(p.current(f) ?? '').length > 0)
  const headerLines = (indent: string) => w.headers.map((h) => `${indent}add_header ${h.key} "${h.value}" always;`)
  if (files.length === 0) {
    // No server block to edit: a snippet to include, named in the manual steps.
    const lines = [`# ${MARK}. Include it in each server block: include snippets/security-headers.conf;`]
    if (w.headers.length) lines.push(...headerLines(''))
    if (w.version) lines.push('server_tokens off;')
    if (lines.length > 1) {
      p.write('nginx/snippets/security-headers.conf', `${lines.join('\n')}\n`)
      p.notes.push('No nginx server block was found in the repository: include nginx/snippets/security-headers.conf in each server block.')
      p.fixHeaders(w, 'nginx/snippets/security-headers.conf, once included in the server block')
      if (w.version)
        p.fix(
          w.version,
          'server_tokens off hides the nginx version.',
          `curl -sI ${sh(p.url)} | grep -i '^server:' shows no version number.`,
        )
    }
    if (w.redirect) p.cannot(w.redirect, 'No nginx server block was found to add the redirect to.')
    p.cookiesInCode(w, 'No nginx server block was found; proxy_cookie_flags needs one that proxies to the app.')
    return
  }
  let redirected = false
  let cookied = false
  const cookieFlags = [
    w.cookies.has('cookie-secure') ? 'secure' : '',
    w.cookies.has('cookie-httponly') ? 'httponly' : '',
    w.cookies.has('cookie-samesite') ? 'samesite=lax' : '',
  ].filter(Boolean)
  for (const file of files) {
    let text = p.current(file)!
    const blocks = serverBlocks(text)
    const hasTls = blocks.some((b) => /\blisten\s+[^;]*\b(?:443|ssl)\b/.test(b.body))
    // From the last block backwards so earlier offsets stay valid.
    for (const b of [...blocks].reverse()) {
      const plainOnly = /\blisten\s+[^;]*\b80\b/.test(b.body) && !/\blisten\s+[^;]*\b(?:443|ssl)\b/.test(b.body)
      const lines: string[] = []
      if (w.redirect && hasTls && plainOnly && !/\breturn\s+30[18]\s+https:/.test(b.body)) {
        lines.push(`${b.indent}# ${MARK}: http to https`, `${b.indent}return 301 https://$host$request_uri;`)
        redirected = true
      } else {
        if (w.headers.length) lines.push(`${b.indent}# ${MARK}: security headers`, ...headerLines(b.indent))
        if (w.version && !/\bserver_tokens\s+off\b/.test(b.body)) lines.push(`${b.indent}server_tokens off;`)
        if (cookieFlags.length && /\bproxy_pass\b/.test(b.body)) {
          lines.push(`${b.indent}proxy_cookie_flags ~ ${cookieFlags.join(' ')};`)
          cookied = true
        }
      }
      if (lines.length) text = `${text.slice(0, b.insertAt)}\n${lines.join('\n')}${text.slice(b.insertAt)}`
    }
    p.write(file, text)
  }
  const where = files.join(', ')
  if (w.headers.length) {
    p.fixHeaders(w, `add_header ... always in each server block of ${where}`)
    p.notes.push('nginx drops inherited add_header lines in a location that has add_header of its own: repeat them there if so.')
  }
  if (w.version) p.fix(w.version, `server_tokens off in ${where}.`, `curl -sI ${sh(p.url)} | grep -i '^server:' shows no version number.`)
  if (w.redirect) {
    if (redirected)
      p.fix(
        w.redirect,
        `The port-80 server block of ${where} answers 301 to https.`,
        `curl -sI ${sh(p.url.replace(/^https:/, 'http:'))} answers 301 with a location on https.`,
      )
    else
      p.cannot(
        w.redirect,
        'No TLS server block (listen 443 ssl) was found next to the port-80 one: set up certificates first (e.g. certbot), then redirect.',
      )
  }
  for (const f of w.cookies.values()) {
    if (cookied)
      p.fix(
        f,
        `proxy_cookie_flags adds ${cookieFlags.join(', ')} to the app's cookies (nginx 1.19.3 or later).`,
        `curl -sI ${sh(p.url)} | grep -i '^set-cookie:' shows the attribute.`,
      )
    else p.cannot(f, 'No server block proxies to the app (proxy_pass): the cookies are set by the app itself; add the attribute there.')
  }
}

function apache(p: Plan, w: Wanted): void {
  const path = pick(
    p.repo,
    ['public/.htaccess', 'public_html/.htaccess', '.htaccess'].filter((x) => p.repo.read(x) !== null).concat(['.htaccess']),
  )
  const lines: string[] = []
  const headerLines: string[] = []
  for (const h of w.headers) headerLines.push(`  Header always set ${h.key} "${h.value}"`)
  if (w.version) headerLines.push('  Header always unset X-Powered-By', '  Header unset X-Powered-By')
  const cookieEdits: Array<[CookieCheck, string, string]> = [
    ['cookie-secure', 'secure', 'Secure'],
    ['cookie-httponly', 'httponly', 'HttpOnly'],
    ['cookie-samesite', 'samesite', 'SameSite=Lax'],
  ]
  for (const [id, attr, add] of cookieEdits)
    if (w.cookies.has(id)) headerLines.push(`  Header always edit* Set-Cookie "(?i)^((?:(?!;\\s?${attr}).)+)$" "$1; ${add}"`)
  if (headerLines.length) lines.push(`# ${MARK}: security headers`, '<IfModule mod_headers.c>', ...headerLines, '</IfModule>')
  if (w.redirect)
    lines.push(
      `# ${MARK}: http to https`,
      '<IfModule mod_rewrite.c>',
      '  RewriteEngine On',
      '  RewriteCond %{HTTPS} off',
      '  RewriteCond %{HTTP:X-Forwarded-Proto} !https',
      '  RewriteRule ^ https://%{HTTP_HOST}%{REQUEST_URI} [L,R=301]',
      '</IfModule>',
    )
  if (!lines.length) return
  p.write(path, appendBlock(p.current(path), `${lines.join('\n')}\n`))
  if (w.headers.length) p.fixHeaders(w, `${path}, mod_headers`)
  if (w.version)
    p.fix(
      w.version,
      `${path} removes X-Powered-By; the Server version needs ServerTokens Prod in the server configuration (not allowed in .htaccess).`,
      `curl -sI ${sh(p.url)} | grep -iE '^(server|x-powered-by):' shows no version number.`,
    )
  for (const f of w.cookies.values())
    p.fix(
      f,
      `${path} appends the missing attribute to every Set-Cookie (mod_headers edit*).`,
      `curl -sI ${sh(p.url)} | grep -i '^set-cookie:' shows the attribute.`,
    )
  if (w.redirect)
    p.fix(
      w.redirect,
      `${path} redirects http to https with mod_rewrite (301).`,
      `curl -sI ${sh(p.url.replace(/^https:/, 'http:'))} answers 301 with a location on https.`,
    )
}

const EXPRESS_ENTRIES = [
  'server.js',
  'app.js',
  'index.js',
  'src/server.js',
  'src/app.js',
  'src/index.js',
  'server.ts',
  'app.ts',
  'index.ts',
  'src/server.ts',
  'src/app.ts',
  'src/index.ts',
  'server.mjs',
  'app.mjs',
  'index.mjs',
]

function expressMiddleware(w: Wanted, esm: boolean): string {
  const cookieOpts = [
    w.cookies.has('cookie-secure') ? 'secure: true' : '',
    w.cookies.has('cookie-httponly') ? 'httpOnly: options.httpOnly ?? true' : '',
    w.cookies.has('cookie-samesite') ? "sameSite: options.sameSite ?? 'lax'" : '',
  ].filter(Boolean)
  const body = [
    `// ${MARK}: security headers${w.redirect ? ', http to https' : ''}${cookieOpts.length ? ', cookie attributes' : ''}.`,
    'const HEADERS = [',
    ...w.headers.map((h) => `  [${JSON.stringify(h.key)}, ${JSON.stringify(h.value)}],`),
    ']',
    '',
    `${esm ? 'export default ' : ''}function securityHeaders(req, res, next) {`,
    ...(w.redirect
      ? [
          "  // Behind a proxy, set app.set('trust proxy', 1) so req.secure reads X-Forwarded-Proto.",
          "  if (process.env.NODE_ENV === 'production' && !req.secure && req.get('x-forwarded-proto') !== 'https') {",
          "    return res.redirect(301, 'https://' + req.get('host') + req.originalUrl)",
          '  }',
        ]
      : []),
    '  for (const [key, value] of HEADERS) res.setHeader(key, value)',
    ...(cookieOpts.length
      ? [
          '  const cookie = res.cookie.bind(res)',
          `  res.cookie = (name, value, options = {}) => cookie(name, value, { ...options, ${cookieOpts.join(', ')} })`,
        ]
      : []),
    '  next()',
    '}',
    ...(esm ? [] : ['', 'module.exports = securityHeaders']),
    '',
  ]
  return body.join('\n')
}

function express(p: Plan, w: Wanted): void {
  const entry = EXPRESS_ENTRIES.find((e) => /\bexpress\s*\(\s*\)/.test(p.current(e) ?? ''))
  const text = entry ? p.current(entry)! : null
  const esm = text ? /^\s*import\s.+from\s+['"]/m.test(text) : false
  const any = w.headers.length || w.redirect || w.cookies.size || w.version
  if (!any) return
  const dir = entry?.includes('/') ? entry.slice(0, entry.lastIndexOf('/') + 1) : ''
  const ext = entry?.endsWith('.ts') ? '.ts' : entry?.endsWith('.mjs') ? '.mjs' : '.js'
  const middleware = `${dir}security-headers${ext}`
  const usesMiddleware = w.headers.length > 0 || !!w.redirect || w.cookies.size > 0
  if (usesMiddleware) p.write(middleware, expressMiddleware(w, esm || ext === '.ts'))
  let wired = false
  if (text) {
    const m = /^([ \t]*)(?:const|let|var)\s+(\w+)(?:\s*:\s*[\w.]+)?\s*=\s*express\s*\(\s*\)\s*;?[ \t]*$/m.exec(text)
    if (m) {
      const app = m[2]!
      const indent = m[1]!
      const after = m.index + m[0].length
      const use: string[] = []
      if (w.version && !text.includes("disable('x-powered-by')")) use.push(`${indent}${app}.disable('x-powered-by')`)
      if (usesMiddleware) use.push(`${indent}${app}.use(securityHeaders)`)
      let next = `${text.slice(0, after)}\n${use.join('\n')}${text.slice(after)}`
      if (usesMiddleware) {
        const spec = `./security-headers${ext === '.ts' ? '' : ext}`
        const importLine = esm || ext === '.ts' ? `import securityHeaders from '${spec}'` : `const securityHeaders = require('${spec}')`
        const lastImport = [
          ...next.matchAll(esm || ext === '.ts' ? /^import\s.*$/gm : /^(?:const|let|var)\s+\w+\s*=\s*require\(.*$/gm),
        ].pop()
        next = lastImport
          ? `${next.slice(0, lastImport.index! + lastImport[0].length)}\n${importLine}${next.slice(lastImport.index! + lastImport[0].length)}`
          : `${importLine}\n${next}`
      }
      p.write(entry!, next)
      wired = true
    }
  }
  const where = wired ? `${middleware}, used by ${entry}` : `${middleware} (add app.use(securityHeaders) before your routes)`
  if (!wired && usesMiddleware)
    p.notes.push(`No express() app was found in the usual entry files: add app.use(require('./${middleware}')) before the routes.`)
  if (w.headers.length) p.fixHeaders(w, where)
  if (w.redirect)
    p.fix(
      w.redirect,
      `${where} redirects http to https in production.`,
      `curl -sI ${sh(p.url.replace(/^https:/, 'http:'))} answers 301 with a location on https.`,
    )
  for (const f of w.cookies.values())
    p.fix(
      f,
      `${where} adds the attribute to cookies set with res.cookie() (not to Set-Cookie written by hand).`,
      `curl -sI ${sh(p.url)} | grep -i '^set-cookie:' shows the attribute.`,
    )
  if (w.version) {
    if (wired)
      p.fix(w.version, `${entry} calls app.disable('x-powered-by').`, `curl -sI ${sh(p.url)} | grep -i '^x-powered-by:' prints nothing.`)
    else p.cannot(w.version, "Add app.disable('x-powered-by') where the express app is created.")
  }
}

const RENDER: Record<PatchPlatform, (p: Plan, w: Wanted) => void> = { vercel, netlify, nextjs, nginx, apache, cloudflare, express }

export function buildPatch(platform: PatchPlatform, src: PatchSource, repo: RepoView = EMPTY_REPO): PatchPlan {
  const plan = new Plan(repo, src.url)
  const w = wanted(src, plan.notFixed, plan.notes)
  RENDER[platform](plan, w)
  return {
    platform,
    edits: [...plan.edits.values()].filter((e) => e.before !== e.after),
    fixed: plan.fixed,
    notFixed: plan.notFixed,
    notes: [...new Set(plan.notes)],
  }
}

/** The platform a repository's files point at, or null. */
export function platformFromRepo(repo: RepoView): PatchPlatform | null {
  const has = (p: string) => repo.paths.includes(p)
  if (NEXT_CONFIGS.some(has)) return 'nextjs'
  if (has('vercel.json')) return 'vercel'
  if (has('netlify.toml')) return 'netlify'
  if (has('wrangler.toml') || has('wrangler.json') || has('wrangler.jsonc')) return 'cloudflare'
  if (repo.paths.some((p) => /(?:^|\/)\.htaccess$/.test(p))) return 'apache'
  if (repo.paths.some((p) => /(?:^|\/)nginx\.conf$|(?:^|\/)(?:conf\.d|sites-available|nginx)\/[\w.-]+\.conf$/.test(p))) return 'nginx'
  if (has('_headers') || has('public/_headers')) return 'netlify'
  const pkg = repo.read('package.json')
  if (pkg && /"express"\s*:/.test(pkg)) return 'express'
  return null
}

/** The patch platform for a detected hosting platform (shared/report/platform.ts), or null for generic. */
export function patchPlatformFor(detected: string): PatchPlatform | null {
  return (PATCH_PLATFORMS as readonly string[]).includes(detected) ? (detected as PatchPlatform) : null
}
