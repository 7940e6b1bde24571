// What every platform writer works on: the findings sorted into what configuration can fix (`Wanted`, from
// wanted.ts), and a `Plan` that collects whole-file edits, fixes, what cannot be fixed and notes. The safety
// rules live here too: header values must be printable ASCII without quotes, backslashes, '$', '%', braces or
// backticks (nginx variables, Apache format strings, template strings), and paths read from a repository must
// be plain relative paths, so a hostile page or repository cannot inject lines into the diff or the
// configuration.

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

export interface Header {
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

export const COOKIE_CHECKS = ['cookie-secure', 'cookie-httponly', 'cookie-samesite'] as const
export type CookieCheck = (typeof COOKIE_CHECKS)[number]

/** A string quoted for a POSIX shell (the verify commands). */
export const sh = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`

function headerVerify(url: string, h: Header[]): string {
  return `curl -sI ${sh(url)} | grep -iE ${sh(`^(${h.map((x) => x.key).join('|')}):`)} prints ${h.map((x) => x.key).join(' and ')}; then run scan_app again.`
}

/** The findings configuration can act on, sorted by kind. */
export interface Wanted {
  headers: Header[]
  headerFixes: Array<{ f: PatchFinding; h: Header[] }>
  version: PatchFinding | null
  redirect: PatchFinding | null
  cookies: Map<CookieCheck, PatchFinding>
}

/** Writes a platform's configuration for what is wanted into the plan: one per platform, in platforms/. */
export type PlatformWriter = (p: Plan, w: Wanted) => void

export const MARK = 'Added by App Audit'

export class Plan {
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
export const appendBlock = (before: string | null, block: string) => (before ? `${withNewline(before)}\n${block}` : block)
/** The first existing path among candidates, else the first candidate. */
export const pick = (repo: RepoView, candidates: string[]) => candidates.find((p) => repo.read(p) !== null) ?? candidates[0]!
export const findPaths = (repo: RepoView, re: RegExp, limit = 50) => repo.paths.filter((p) => re.test(p) && isSafePath(p)).slice(0, limit)

/** A `_headers` file block (Netlify, Cloudflare Pages) setting the headers on every path. */
export function headersFileBlock(headers: Header[]): string {
  return `# ${MARK}: security headers on every path\n/*\n${headers.map((h) => `  ${h.key}: ${h.value}`).join('\n')}\n`
}
