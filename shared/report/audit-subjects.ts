// What an audit finding is about, for the checks whose one result on a page reports several separate
// things: each axe rule the accessibility check lists, each cookie the cookie checks name, each third-party
// host the privacy checks name, each secret the secret checks find and each library version
// vulnerable-js-library names. Across the pages of an audit those merge by the thing itself (one finding
// per rule, per cookie, per host, with the pages it was found on), not by the hash of the page's whole
// evidence, which differs as soon as two pages differ in anything else. Every other check keeps merging by
// fingerprint (shared/report/audit-report.ts). Pure: no I/O.
import type { CheckStatus, Severity } from '../checks/types.ts'
import type { CheckResult } from './scan-report.ts'

export type SubjectKind = 'axe-rule' | 'cookie' | 'third-party-host' | 'secret' | 'library'

/** One thing a check's result on one page reports. */
export interface SubjectPart {
  kind: SubjectKind
  /** The rule id, cookie name or host: equal on every page where the same thing is found. */
  key: string
  status: 'fail' | 'warn' | 'info'
  severity: Severity
  /** What is wrong with it on this page (no page address, so the first page's evidence speaks for all). */
  evidence: Record<string, unknown>
  /** Cookies behind it: the part counts on a page only when the page set one of them itself. */
  cookies?: string[]
  /** Accessibility: elements on this page that break the rule (count and first selectors). */
  nodes?: number
  targets?: string[]
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [])
const records = (v: unknown): Record<string, unknown>[] =>
  Array.isArray(v) ? v.filter((x): x is Record<string, unknown> => !!x && typeof x === 'object' && !Array.isArray(x)) : []

type AxeRule = { id: string; impact: string | null; help?: string; helpUrl?: string; nodes: number; targets: string[] }

function axeRules(evidence: Record<string, unknown>): AxeRule[] {
  return [...records(evidence.listed), ...records(evidence.otherViolations)]
    .filter((v) => typeof v.id === 'string')
    .map((v) => ({
      id: v.id as string,
      impact: typeof v.impact === 'string' ? v.impact : null,
      ...(typeof v.help === 'string' ? { help: v.help } : {}),
      ...(typeof v.helpUrl === 'string' ? { helpUrl: v.helpUrl } : {}),
      nodes: typeof v.nodes === 'number' ? v.nodes : 0,
      targets: strings(v.targets),
    }))
}

/** One part per named cookie, worst problem first when a cookie is named twice. */
function cookieParts(
  named: Array<{ names: string[]; status: 'fail' | 'warn'; severity: Severity; problem: string }>,
  extra: Record<string, unknown> = {},
): SubjectPart[] {
  const parts = new Map<string, SubjectPart>()
  for (const n of named) {
    for (const name of n.names) {
      if (parts.has(name)) continue
      parts.set(name, {
        kind: 'cookie',
        key: name,
        status: n.status,
        severity: n.severity,
        evidence: { cookie: name, problem: n.problem, ...extra },
        cookies: [name],
      })
    }
  }
  return [...parts.values()]
}

type Evidence = Record<string, unknown>

/** Each axe rule the accessibility check lists: critical or serious fails, the rest warns at low severity, as
 * the check judges a page. */
function axeRuleParts(r: CheckResult, e: Evidence): SubjectPart[] {
  return axeRules(e).map((v) => {
    const severe = v.impact === 'critical' || v.impact === 'serious'
    return {
      kind: 'axe-rule' as const,
      key: v.id,
      status: severe ? ('fail' as const) : ('warn' as const),
      severity: severe ? r.severity : 'low',
      evidence: {
        rule: v.id,
        impact: v.impact,
        ...(v.help ? { help: v.help } : {}),
        ...(v.helpUrl ? { helpUrl: v.helpUrl } : {}),
        ...(typeof e.engine === 'string' ? { engine: e.engine } : {}),
      },
      nodes: v.nodes,
      targets: v.targets,
    }
  })
}

function httpOnlyParts(_r: CheckResult, e: Evidence): SubjectPart[] {
  return cookieParts([
    {
      names: strings(e.sessionWithoutHttpOnly),
      status: 'fail',
      severity: 'high',
      problem: 'session cookie readable by JavaScript (no HttpOnly)',
    },
  ])
}

function secureParts(_r: CheckResult, e: Evidence): SubjectPart[] {
  if (typeof e.note === 'string') {
    // An http site: every first-party cookie crosses the network in clear.
    return cookieParts([{ names: strings(e.names), status: 'warn', severity: 'medium', problem: 'set over plain http' }])
  }
  return cookieParts([
    { names: strings(e.sessionWithoutSecure), status: 'fail', severity: 'high', problem: 'session cookie without Secure' },
    { names: strings(e.withoutSecure), status: 'warn', severity: 'medium', problem: 'cookie without Secure' },
  ])
}

function sameSiteParts(_r: CheckResult, e: Evidence): SubjectPart[] {
  return cookieParts([
    { names: strings(e.sameSiteNoneWithoutSecure), status: 'fail', severity: 'medium', problem: 'SameSite=None without Secure' },
    { names: strings(e.withoutSameSite), status: 'warn', severity: 'low', problem: 'no valid SameSite attribute' },
  ])
}

/** One part per host whose cookies the page got, naming them. */
function thirdPartyCookieParts(r: CheckResult, e: Evidence): SubjectPart[] {
  const byHost = new Map<string, string[]>()
  for (const c of records(e.thirdParty)) {
    if (typeof c.name !== 'string' || typeof c.domain !== 'string') continue
    const host = c.domain.replace(/^\./, '').toLowerCase()
    byHost.set(host, [...(byHost.get(host) ?? []), c.name])
  }
  return [...byHost.entries()].map(([host, names]) => ({
    kind: 'third-party-host' as const,
    key: host,
    status: r.status === 'fail' ? ('fail' as const) : ('warn' as const),
    severity: r.severity,
    evidence: { host, cookies: [...new Set(names)].sort() },
    cookies: names,
  }))
}

/** One informational part per third-party host the page contacted. */
function thirdPartyRequestParts(_r: CheckResult, e: Evidence): SubjectPart[] {
  return records(e.hosts)
    .filter((h) => typeof h.host === 'string')
    .map((h) => ({
      kind: 'third-party-host' as const,
      key: h.host as string,
      status: 'info' as const,
      severity: 'info' as const,
      evidence: {
        host: h.host,
        ...(typeof h.domain === 'string' ? { domain: h.domain } : {}),
        requests: typeof h.requests === 'number' ? h.requests : 0,
        types: h.types && typeof h.types === 'object' ? h.types : {},
      },
    }))
}

/** One part per secret (kind and redacted value): the same key in the same bundle is one finding on every page
 * that loads it. Public-by-design keys are not findings. */
function secretParts(r: CheckResult, e: Evidence): SubjectPart[] {
  const parts = new Map<string, SubjectPart>()
  for (const f of records(e.findings)) {
    if (f.public === true || typeof f.kind !== 'string' || typeof f.value !== 'string') continue
    const key = `${f.kind} ${f.value}`
    if (parts.has(key)) continue
    const severity = isSeverity(f.severity) ? f.severity : r.severity
    parts.set(key, {
      kind: 'secret',
      key,
      status: severity === 'critical' || severity === 'high' ? 'fail' : 'warn',
      severity,
      evidence: pick(f, ['kind', 'severity', 'value', 'script', 'line', 'note']),
    })
  }
  return [...parts.values()]
}

/** One part per library version with advisories: fail when a release fixes them, warn when none in its line does. */
function libraryParts(_r: CheckResult, e: Evidence): SubjectPart[] {
  return records(e.findings).flatMap((f) => {
    const advisories = records(f.advisories)
    if (typeof f.library !== 'string' || typeof f.version !== 'string' || advisories.length === 0) return []
    const fixable = advisories.some((a) => typeof a.fixedIn === 'string')
    const worst = advisories.map((a) => a.severity).find((s) => s === 'high' || s === 'critical') ? 'high' : 'medium'
    return [
      {
        kind: 'library' as const,
        key: `${typeof f.id === 'string' ? f.id : f.library}@${f.version}`,
        status: fixable ? ('fail' as const) : ('warn' as const),
        severity: worst,
        evidence: pick(f, ['library', 'id', 'version', 'scripts', 'advisories', 'fixedVersion', 'noFixInThisLine', 'endOfLife', 'upgrade']),
      },
    ]
  })
}

const SEVERITIES = new Set(['critical', 'high', 'medium', 'low', 'info'])
const isSeverity = (v: unknown): v is Severity => typeof v === 'string' && SEVERITIES.has(v)

function pick(from: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const k of keys) if (from[k] !== undefined) out[k] = structuredClone(from[k])
  return out
}

/** The checks whose results split into subjects, the results that split (fail and warn, or third-party-requests'
 * info: a host contacted is worth a line of its own though it costs no points), and how. */
const SPLITTERS = new Map<string, { on: 'finding' | 'info'; split: (r: CheckResult, e: Evidence) => SubjectPart[] }>([
  ['accessibility', { on: 'finding', split: axeRuleParts }],
  ['cookie-httponly', { on: 'finding', split: httpOnlyParts }],
  ['cookie-secure', { on: 'finding', split: secureParts }],
  ['cookie-samesite', { on: 'finding', split: sameSiteParts }],
  ['third-party-cookies', { on: 'finding', split: thirdPartyCookieParts }],
  ['third-party-requests', { on: 'info', split: thirdPartyRequestParts }],
  ['js-secrets', { on: 'finding', split: secretParts }],
  ['page-secrets', { on: 'finding', split: secretParts }],
  ['vulnerable-js-library', { on: 'finding', split: libraryParts }],
])

/** The subjects of one page's check result, or null when the check merges by fingerprint; none when the result
 * is not one that splits. */
export function subjectsOf(r: CheckResult): SubjectPart[] | null {
  const splitter = SPLITTERS.get(r.id)
  if (!splitter) return null
  const splits = splitter.on === 'info' ? r.status === 'info' : r.status === 'fail' || r.status === 'warn'
  return splits ? splitter.split(r, (r.evidence ?? {}) as Evidence) : []
}

/**
 * Whether the part counts on this page. A cookie counts only on the pages that set it themselves; a page
 * stored before pages recorded the cookies they set (no `cookiesSet`) counts as it always did.
 */
export function attributable(part: SubjectPart, page: { cookiesSet?: string[] }): boolean {
  if (!part.cookies || !page.cookiesSet) return true
  const set = new Set(page.cookiesSet)
  return part.cookies.some((c) => set.has(c))
}

/** The evidence of a merged subject: the first page's, with counts summed over the pages. */
export function mergeSubjectEvidence(kind: SubjectKind, into: Record<string, unknown>, part: SubjectPart): void {
  if (kind === 'third-party-host') {
    if (typeof into.requests === 'number' && typeof part.evidence.requests === 'number') into.requests += part.evidence.requests
    const types = into.types as Record<string, number> | undefined
    const more = part.evidence.types as Record<string, number> | undefined
    if (types && more) for (const [t, n] of Object.entries(more)) types[t] = (types[t] ?? 0) + n
    if (Array.isArray(into.cookies) && Array.isArray(part.evidence.cookies))
      into.cookies = [...new Set([...(into.cookies as string[]), ...(part.evidence.cookies as string[])])].sort().slice(0, 30)
  }
}

/** One line about a merged subject across the pages it was found on. */
export function subjectSummary(
  kind: SubjectKind,
  key: string,
  evidence: Record<string, unknown>,
  pageCount: number,
  status: CheckStatus,
  elements: number,
): string {
  const on = `${pageCount} page${pageCount === 1 ? '' : 's'}`
  if (kind === 'axe-rule') {
    const impact = typeof evidence.impact === 'string' ? evidence.impact : 'unknown impact'
    const help = typeof evidence.help === 'string' ? `: ${evidence.help}` : ''
    return `Accessibility rule ${key} (${impact})${help}; ${elements} element${elements === 1 ? '' : 's'} on ${on}.`
  }
  if (kind === 'cookie') return `Cookie ${key}: ${String(evidence.problem ?? 'flagged')}; set by ${on}.`
  if (kind === 'secret') return `Secret ${key} (${String(evidence.severity ?? 'high')}) found on ${on}: revoke and rotate it.`
  if (kind === 'library') {
    const fixed = typeof evidence.fixedVersion === 'string' ? `, fixed in ${evidence.fixedVersion}` : ''
    const ids = records(evidence.advisories)
      .flatMap((a) => strings(a.ids).slice(0, 1))
      .slice(0, 3)
    return `${String(evidence.library ?? key)} ${String(evidence.version ?? '')} has known vulnerabilities (${ids.join(', ')})${fixed}; loaded on ${on}.`
  }
  if (Array.isArray(evidence.cookies))
    return `Third-party cookie(s) ${(evidence.cookies as string[]).slice(0, 5).join(', ')} on ${key}, set before any interaction on ${on}.`
  const requests = typeof evidence.requests === 'number' ? evidence.requests : 0
  return `${key} was contacted before any interaction on ${on} (${requests} request${requests === 1 ? '' : 's'})${status === 'info' ? '; informational, not scored' : ''}.`
}
