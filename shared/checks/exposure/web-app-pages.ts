// What the known-application probes (probe-paths-apps.ts) answered, read by content: WordPress's readme,
// XML-RPC endpoint, REST user list, author archive and WP-Cron; DokuWiki's and MediaWiki's installers and
// phpMyAdmin's bundled documentation under the scanned URL's base path. Each reader returns what it found or
// null; a status code alone never counts, and an answer equal to the one for a path that cannot exist is
// never read (a single-page app answers index.html everywhere).

import { type AppProbePlan, planAppProbes } from '../probe-paths-apps.ts'
import type { HttpResponseArtifact, ProbeResult, Severity } from '../types.ts'
import { clip } from '../util/http.ts'
import { BASELINE_PROBE } from '../probe-paths.ts'
import { sameAsBaseline } from '../util/probe.ts'

export interface AppFinding {
  app: 'WordPress' | 'DokuWiki' | 'MediaWiki' | 'phpMyAdmin'
  /** What was found, as a short noun phrase ("REST API user list"). */
  item: string
  url: string
  status: number
  severity: Severity
  /** What it gave away: versions, counts, masked names; never e-mail addresses or full user names. */
  details: Record<string, unknown>
}

const SCAN = 65_536
const VERSION = String.raw`(\d{1,3}\.\d{1,3}(?:\.\d{1,4})?(?:[-.][\w.]{1,20})?)`

/** "admin" -> "a***n", "jo" -> "j***": enough to show a real login name was given away, not to use it. */
export function maskName(name: string): string {
  const s = [...name.slice(0, 100)]
  if (s.length === 0) return ''
  return s.length <= 2 ? `${s[0]}***` : `${s[0]}***${s[s.length - 1]}`
}

/** An answer of its own: answered, and not the app's catch-all answer. */
function own(probe: ProbeResult | undefined, probes: Record<string, ProbeResult>): probe is ProbeResult {
  return probe !== undefined && probe.status !== 0 && !probe.error && !sameAsBaseline(probe, probes)
}

const text = (probe: ProbeResult) => probe.body.slice(0, SCAN)

/** WordPress's readme.html: its title, and the PHP and MySQL versions it requires (they narrow the release). */
export function readWordPressReadme(body: string): Record<string, unknown> | null {
  const head = body.slice(0, SCAN)
  if (!/<title>\s*WordPress\s*(?:&#8250;|&rsaquo;|›|&gt;)\s*ReadMe\s*<\/title>/i.test(head)) return null
  const req = /System Requirements<\/h2>([\s\S]{0,2000}?)<\/ul>/i.exec(head)?.[1] ?? ''
  const php = /PHP<\/a>\s*version\s*<strong>([\d.]{1,12})<\/strong>/i.exec(req)?.[1] ?? null
  const mysql = /MySQL<\/a>\s*version\s*<strong>([\d.]{1,12})<\/strong>/i.exec(req)?.[1] ?? null
  return { requiresPhp: php, requiresMysql: mysql }
}

/** XML-RPC's answer to a GET: exactly the sentence WordPress's IXR server dies with. */
export const isXmlRpcAnswer = (body: string) => body.trim() === 'XML-RPC server accepts POST requests only.'

/** A REST user list: a JSON array of objects, each with a string slug and a numeric id. Slugs masked. */
export function readUserList(body: string): { count: number; slugs: string[] } | null {
  const t = body.replace(/^\uFEFF/, '').trim()
  if (!t.startsWith('[')) return null
  let value: unknown
  try {
    value = JSON.parse(t)
  } catch {
    return null
  }
  if (!Array.isArray(value) || value.length === 0) return null
  const users = value.filter(
    (u): u is { slug: string } =>
      typeof u === 'object' &&
      u !== null &&
      typeof (u as { slug?: unknown }).slug === 'string' &&
      typeof (u as { id?: unknown }).id === 'number',
  )
  if (users.length !== value.length) return null
  return { count: users.length, slugs: users.slice(0, 5).map((u) => maskName(u.slug)) }
}

/** ?author=1: a redirect to /author/<slug>/, or the author archive itself (its body class names the author). */
export function readAuthorArchive(probe: ProbeResult): { slug: string; via: 'redirect' | 'archive' } | null {
  if (probe.status >= 300 && probe.status < 400) {
    const m = /\/author\/([^/?#\s]{1,100})\/?(?:[?#]|$)/.exec(probe.location ?? '')
    return m ? { slug: maskName(decodeURIComponent(m[1]!)), via: 'redirect' } : null
  }
  if (probe.status !== 200) return null
  const m = /<body[^>]{0,400}\bclass="[^"]{0,400}\bauthor author-([\w%.-]{1,100}) author-1\b/.exec(text(probe))
  return m ? { slug: maskName(m[1]!), via: 'archive' } : null
}

/** DokuWiki's installer, by its title (English) or the permissions image only it links; whether it offers its form. */
export function readDokuWikiInstaller(body: string): Record<string, unknown> | null {
  const head = body.slice(0, SCAN)
  const title = /<title>\s*DokuWiki Installer\s*<\/title>/i.test(head)
  if (!title && !/dont-panic-if-you-see-this-in-your-logs-it-means-your-directory-permissions-are-correct/.test(head)) return null
  const form = /name="d\[(?:title|acl|superuser)\]"/.test(head)
  return { state: form ? 'offers the setup form' : 'refuses or reports problems (no setup form)', setupForm: form }
}

/** MediaWiki's web installer: "MediaWiki x.y.z installation". */
export function readMediaWikiInstaller(body: string): Record<string, unknown> | null {
  const m = new RegExp(String.raw`<title>\s*MediaWiki ${VERSION} installation\s*</title>`, 'i').exec(body.slice(0, SCAN))
  return m ? { version: clip(m[1]!, 40) } : null
}

/** phpMyAdmin's bundled Sphinx documentation: "... — phpMyAdmin x.y.z documentation". */
export function readPhpMyAdminDocs(body: string): Record<string, unknown> | null {
  const m = new RegExp(String.raw`<title>[^<]{0,200}phpMyAdmin ${VERSION} documentation\s*</title>`, 'i').exec(body.slice(0, SCAN))
  return m ? { version: clip(m[1]!, 40) } : null
}

function wordpressFindings(plan: NonNullable<AppProbePlan['wordpress']>, probes: Record<string, ProbeResult>): AppFinding[] {
  const out: AppFinding[] = []
  const at = (path: string) => probes[path]
  const add = (probe: ProbeResult, item: string, severity: Severity, details: Record<string, unknown>) =>
    out.push({ app: 'WordPress', item, url: probe.url, status: probe.status, severity, details })
  const readme = at(plan.paths.readme)
  const readmeFound = own(readme, probes) ? readWordPressReadme(readme.body) : null
  if (readme && readmeFound) add(readme, 'readme.html', 'low', readmeFound)
  const xmlrpc = at(plan.paths.xmlrpc)
  if (own(xmlrpc, probes) && isXmlRpcAnswer(xmlrpc.body))
    add(xmlrpc, 'XML-RPC endpoint', 'medium', { answer: 'XML-RPC server accepts POST requests only.' })
  for (const path of [plan.paths.restUsers, plan.paths.restRouteUsers]) {
    const p = at(path)
    const users = own(p, probes) ? readUserList(p.body) : null
    if (p && users) {
      add(p, 'REST API user list', 'medium', users)
      break
    }
  }
  const author = at(plan.paths.author)
  const archive = own(author, probes) ? readAuthorArchive(author) : null
  if (author && archive) add(author, 'author archive', 'low', archive)
  const cron = at(plan.paths.cron)
  const baseline = probes[BASELINE_PROBE]
  const emptyForAnything = baseline !== undefined && baseline.status === 200 && baseline.body.trim() === ''
  if (cron && cron.status === 200 && !cron.error && cron.body.trim() === '' && !emptyForAnything)
    add(cron, 'WP-Cron endpoint', 'low', { answer: '200 with an empty body' })
  return out
}

function basePathFindings(plan: NonNullable<AppProbePlan['base']>, probes: Record<string, ProbeResult>): AppFinding[] {
  const out: AppFinding[] = []
  const readers: Array<[string, AppFinding['app'], string, Severity, (body: string) => Record<string, unknown> | null]> = [
    [plan.paths.dokuwikiInstaller, 'DokuWiki', 'installer (install.php)', 'medium', readDokuWikiInstaller],
    [plan.paths.mediawikiInstaller, 'MediaWiki', 'installer (mw-config/)', 'medium', readMediaWikiInstaller],
    [plan.paths.phpMyAdminDocs, 'phpMyAdmin', 'bundled documentation', 'low', readPhpMyAdminDocs],
  ]
  for (const [path, app, item, severity, read] of readers) {
    const p = probes[path]
    const found = own(p, probes) ? read(p.body) : null
    if (!p || !found) continue
    // A DokuWiki installer that offers its form lets anyone set the superuser.
    out.push({ app, item, url: p.url, status: p.status, severity: found.setupForm === true ? 'high' : severity, details: found })
  }
  return out
}

/** Every finding of the known-application probes this scan planned (the same plan the gatherer made). */
export function appFindings(
  target: { finalUrl: string },
  main: Pick<HttpResponseArtifact, 'body' | 'headers'>,
  probes: Record<string, ProbeResult>,
): { plan: AppProbePlan; findings: AppFinding[]; probed: string[] } {
  const plan = planAppProbes(target.finalUrl, main)
  const planned = [...Object.values(plan.wordpress?.paths ?? {}), ...Object.values(plan.base?.paths ?? {})]
  const probed = planned.filter((p) => probes[p] !== undefined)
  const findings = [
    ...(plan.wordpress ? wordpressFindings(plan.wordpress, probes) : []),
    ...(plan.base ? basePathFindings(plan.base, probes) : []),
  ]
  return { plan, findings, probed }
}
