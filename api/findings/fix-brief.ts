// A fix brief: for each failing or warning check of a scan, the change to make, where it goes on the
// site's hosting platform (detected, or named by the caller) and how to verify it. The kind of change and
// its places come from each check's metadata (fixTarget) and the per-kind table.
import { FIX_PLACES } from '../../shared/checks/fix-places.ts'
import { getCheck } from '../../shared/checks/registry.ts'
import { titleFor } from '../../shared/checks/runner.ts'
import type { FixTarget } from '../../shared/checks/types.ts'
import type { Platform } from '../../shared/report/platform.ts'
import type { Report, ReportCheck } from '../../shared/report/schema.ts'
import { penaltyOf } from '../../shared/report/scoring.ts'

/** The exposed file's URL from the evidence (url, or path on the origin), else the path the check probes. */
function servedUrl(check: ReportCheck, target: FixTarget, origin: string): string | null {
  const e = check.evidence
  if (typeof e.url === 'string' && /^https?:\/\//.test(e.url)) return e.url
  if (typeof e.path === 'string' && e.path.startsWith('/')) return `${origin}${e.path}`
  return target.path ? `${origin}${target.path}` : null
}

const sh = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`

function verification(check: ReportCheck, target: FixTarget, report: Report, scanUrl: string): string {
  const finalUrl = report.finalUrl || scanUrl
  const { hostname, origin } = new URL(finalUrl)
  const rescan = `Then re-run scan_app with {"url": ${JSON.stringify(scanUrl)}} and check that ${check.id} passes.`
  switch (target.kind) {
    case 'headers': {
      const names = target.headers ?? []
      return `curl -sI ${sh(finalUrl)} | grep -iE ${sh(`^(${names.join('|')}):`)} must print ${names.join(' and ')} with the new value. ${rescan}`
    }
    case 'https-redirect': {
      const start = typeof check.evidence.startUrl === 'string' ? check.evidence.startUrl : `http://${hostname}/`
      return `curl -sI ${sh(start)} must answer 301 or 308 with a location on https://${hostname}/. ${rescan}`
    }
    case 'cookies': {
      const attribute = check.id === 'cookie-secure' ? 'Secure' : check.id === 'cookie-httponly' ? 'HttpOnly' : 'SameSite=Lax (or Strict)'
      return `curl -sI ${sh(finalUrl)} | grep -i '^set-cookie:' must show ${attribute} on every cookie named in the evidence (sign in first if the cookie is set after login). ${rescan}`
    }
    case 'mixed-content':
      return `Load ${finalUrl} in a browser: the console must show no "Mixed Content" messages. ${rescan}`
    case 'version':
      return `curl -sI ${sh(finalUrl)} | grep -iE '^(server|x-powered-by|x-aspnet-version|x-aspnetmvc-version|x-generator):' must show no version numbers, and the page no versioned <meta name="generator">. ${rescan}`
    case 'served-file': {
      const url = servedUrl(check, target, origin)
      const probe = url
        ? `curl -s -o /dev/null -w '%{http_code}\\n' ${sh(url)} must print 404 or 403 (an HTML page that answers every path also passes)`
        : 'Each file named in the evidence must answer 404 or 403'
      return `${probe}; rotate any secret the file held. ${rescan}`
    }
    case 'dependencies': {
      const scripts = Array.isArray(check.evidence.findings)
        ? check.evidence.findings.flatMap((f) => (Array.isArray(f?.scripts) ? f.scripts.slice(0, 1) : [])).slice(0, 3)
        : []
      const see = scripts.length > 0 ? ` (${scripts.map((s) => `curl -s ${sh(String(s))} | head -c 400`).join('; ')})` : ''
      return `Each script named in the evidence must now hold the fixed release: its banner or version constant shows the new version${see}. ${rescan}`
    }
    case 'secrets':
      return `The old key must be revoked at its provider (a call with it must fail), and the new key must not appear in any script the page loads. ${rescan}`
    default:
      return rescan.replace(/^Then r/, 'R')
  }
}

/**
 * A finding merged across an audit's pages, in the shape of a report's check: what the brief writer reads.
 * The one conversion, for get_fix_brief and the report pages.
 */
export function findingAsCheck(f: {
  checkId: unknown
  title: unknown
  category: unknown
  severity: unknown
  status: unknown
  summary: unknown
  evidence?: unknown
  advice?: unknown
}): ReportCheck {
  return {
    id: f.checkId,
    title: f.title,
    category: f.category,
    severity: f.severity,
    status: f.status,
    summary: f.summary,
    evidence: (f.evidence ?? {}) as Record<string, unknown>,
    advice: f.advice ?? '',
  } as ReportCheck
}

export function brief(check: ReportCheck, platform: Platform, report: Report, scanUrl: string) {
  const meta = getCheck(check.id)
  const target: FixTarget = meta?.fixTarget ?? { kind: 'other' }
  // Advice computed from this result's evidence (the csp check's policy from the page) comes first.
  const computed = meta?.advise?.(check, platform) ?? null
  const platformFix = computed ?? (platform === 'generic' ? undefined : meta?.fix[platform])
  return {
    checkId: check.id,
    // What the problem is: reports stored before checks had failing titles get it here too.
    title: meta ? titleFor(meta, check.status, check.evidence) : check.title,
    severity: check.severity,
    status: check.status,
    impact: penaltyOf(check),
    problem: check.summary,
    evidence: check.evidence,
    change: platformFix ?? meta?.fix.generic ?? check.advice ?? check.summary,
    // False when the check has no fix written for this platform and the generic one stands in.
    platformSpecific: platform === 'generic' || platformFix !== undefined,
    where: target.where?.[platform] ?? FIX_PLACES[target.kind][platform],
    verify: verification(check, target, report, scanUrl),
  }
}
