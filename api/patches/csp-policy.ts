// The Content-Security-Policy a patch proposes. Reports whose csp check recorded the page's sources
// (evidence.pageSources: inline-script hashes, the origins each kind of resource came from) get the policy
// the shared builder computes from them (shared/checks/util/csp-builder.ts, the same one the check's advice
// uses), in hash form, since a configuration file cannot make nonces. Older reports fall back to the
// third-party origins in third-party-requests' evidence. Every source is validated, so nothing a site
// serves can inject text into a configuration file.
import { asPageSources, buildCsp, DIRECTIVE_OF } from '../../shared/checks/util/csp-builder.ts'

export interface CspAdvice {
  policy: string
  /** What the policy allows beyond the site itself, and what to check before enforcing it. */
  notes: string[]
}

interface ReportLike {
  checks?: ReadonlyArray<{ id: string; status?: string; evidence?: Record<string, unknown> }>
}

const HOST = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/
const MAX_SOURCES_PER_DIRECTIVE = 20

export function adviseCsp(report: ReportLike): CspAdvice {
  const sources = asPageSources(report.checks?.find((c) => c.id === 'csp')?.evidence?.pageSources)
  if (sources) {
    const { policy, notes } = buildCsp(sources, { allowNonce: false })
    return { policy, notes }
  }
  return fromThirdParties(report)
}

/** For reports recorded before the csp check kept the page's sources: the third-party origins only. */
function fromThirdParties(report: ReportLike): CspAdvice {
  const sources = new Map<string, Set<string>>()
  const tp = report.checks?.find((c) => c.id === 'third-party-requests')?.evidence
  const domains = Array.isArray(tp?.domains) ? tp.domains : []
  let dropped = 0
  for (const d of domains.slice(0, 100)) {
    const domain = typeof d?.domain === 'string' ? d.domain.toLowerCase() : ''
    if (!HOST.test(domain)) {
      dropped++
      continue
    }
    const types: unknown[] = Array.isArray(d.types) ? d.types : Object.keys(d.types ?? {})
    for (const t of types) {
      const dir = typeof t === 'string' ? DIRECTIVE_OF[t] : undefined
      if (!dir) continue
      const set = sources.get(dir) ?? new Set<string>()
      if (set.size < MAX_SOURCES_PER_DIRECTIVE) set.add(`https://${domain} https://*.${domain}`)
      sources.set(dir, set)
    }
  }
  const list = (dir: string, base: string[]) => [dir, ...base, ...(sources.get(dir) ?? [])].join(' ')
  const directives = [
    "default-src 'self'",
    list('script-src', ["'self'"]),
    // Inline styles are common and far less dangerous than inline scripts: allowed, so the page keeps its look.
    list('style-src', ["'self'", "'unsafe-inline'"]),
    list('img-src', ["'self'", 'data:']),
    list('font-src', ["'self'", 'data:']),
    list('connect-src', ["'self'"]),
    ...(sources.has('frame-src') ? [list('frame-src', ["'self'"])] : []),
    ...(sources.has('media-src') ? [list('media-src', ["'self'"])] : []),
    "object-src 'none'",
    "base-uri 'self'",
    "frame-ancestors 'none'",
    "form-action 'self'",
  ]
  const thirdParty = [...new Set([...sources.values()].flatMap((s) => [...s]))].length
  const notes = [
    thirdParty > 0
      ? `Allows the third-party origins the page loaded when it was scanned (${thirdParty} in all); pages that load others need them added.`
      : 'The page loaded nothing from other sites when it was scanned, so the policy allows only the site itself.',
    "Inline <script> blocks are not allowed: move them to files, or add a nonce or hash (script-src 'nonce-...').",
    'Try it first as Content-Security-Policy-Report-Only and watch the browser console, then enforce it.',
  ]
  if (dropped > 0) notes.push(`${dropped} third-party name(s) that are not plain host names were left out.`)
  return { policy: directives.join('; '), notes }
}
