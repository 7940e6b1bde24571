// SARIF 2.1.0 (GitHub code scanning and other SARIF viewers): one run; one rule per check of the report,
// with its description, default level and how to fix it; one result per finding (fail and warn).
// partialFingerprints carry the finding's fingerprint, so a viewer tracks the same finding across uploads.
//
// Locations: GitHub matches a result's location to a file of the checked-out repository and rejects the
// whole upload when an absolute URI's scheme is not the checkout's `file` ("SARIF URI scheme "http" did not
// match the checkout URI scheme "file""). So a result is located at a repository path, never at the page's
// URL: the file the user maps the app to (ExportContext.repositoryPath), or else a scheme-less relative
// reference made of the page's host and path (`shop.example.com/checkout`). The page's URL itself is in the
// message and in the result's properties; the platform file where the fix goes, when there is one, is a
// related location. Only the first location of a result counts on GitHub, and it needs a region.
import { getCheck } from '../../checks/registry.ts'
import type { FixKind, Platform, Severity } from '../../checks/types.ts'
import type { ModelFinding, ReportModel } from './model.ts'
import type { ExportContext } from './types.ts'

export const SARIF_SCHEMA_URI = 'https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json'
export const FINGERPRINT_KEY = 'appauditFingerprint/v1'

/** How a viewer shows a finding, by its severity. */
export const SARIF_LEVEL: Readonly<Record<Severity, 'error' | 'warning' | 'note'>> = {
  critical: 'error',
  high: 'error',
  medium: 'warning',
  low: 'note',
  info: 'note',
}

// GitHub ranks security alerts by this property (a CVSS-like number as a string: over 9.0 critical, 7.0-8.9
// high, 4.0-6.9 medium, 0.1-3.9 low); it reads it only on rules tagged `security`. Other viewers ignore it.
export const SECURITY_SEVERITY: Readonly<Record<Severity, string>> = {
  critical: '9.5',
  high: '8.0',
  medium: '5.5',
  low: '3.0',
  info: '0.1',
}
const SECURITY_CATEGORIES = new Set(['security', 'https', 'cookies', 'exposure', 'secrets'])

/**
 * The file in the app's repository where a fix of this kind goes on this platform, when it is a file there
 * at all (shared/checks/fix-places.ts names dashboards and server blocks too, which no repository holds).
 */
const FIX_FILES: Partial<Record<FixKind, Partial<Record<Platform, string>>>> = {
  headers: { vercel: 'vercel.json', netlify: 'netlify.toml', nextjs: 'next.config.js' },
  version: { nextjs: 'next.config.js' },
  'served-file': { netlify: 'netlify.toml' },
}

/** The repository file a check's fix goes in on the platform, or null when it goes elsewhere. */
export function fixFile(checkId: string, platform: Platform): string | null {
  const target = getCheck(checkId)?.fixTarget
  if (!target) return null
  // A check whose fix goes somewhere unusual on this platform says so; that place is not the usual file.
  if (target.where?.[platform] !== undefined) return null
  return FIX_FILES[target.kind]?.[platform] ?? null
}

/** How to fix a check on the platform (the generic fix where none is written for it). */
export function fixText(checkId: string, platform: Platform, fallback: string): string {
  const meta = getCheck(checkId)
  if (!meta) return fallback
  return (platform !== 'generic' ? meta.fix[platform] : undefined) ?? meta.fix.generic
}

/**
 * A page's URL as a scheme-less relative reference: host and path, without the port (a CI job's app on a
 * random port stays one path across runs), query or fragment (they vary), each segment percent-encoded.
 * A relative reference has no scheme, so GitHub reads it as a path of the checkout and accepts the upload.
 */
export function pageReference(url: string): string {
  let u: URL
  try {
    u = new URL(url)
  } catch {
    return 'app'
  }
  const segments = u.pathname
    .split('/')
    .filter(Boolean)
    .map((s) => encodeURIComponent(safeDecode(s)))
  // A host of letters and dots cannot read as a scheme: a colon is needed for that, and the port is dropped.
  return [encodeURIComponent(u.hostname.replace(/^\[|\]$/g, '')) || 'app', ...segments].join('/')
}

const safeDecode = (s: string) => {
  try {
    return decodeURIComponent(s)
  } catch {
    return s
  }
}

/** A repository path as the user gave it: forward slashes, no leading ./ or /, nothing that climbs out. */
export function repositoryPathOf(path: string): string | null {
  const clean = path
    .trim()
    .replace(/\\/g, '/')
    .replace(/^(\.\/)+/, '')
    .replace(/^\/+/, '')
  if (!clean || /^[A-Za-z][A-Za-z0-9+.-]*:/.test(clean) || clean.split('/').includes('..')) return null
  return clean
    .split('/')
    .map((s) => encodeURIComponent(s))
    .join('/')
}

const pascal = (id: string) =>
  id
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('')

function rule(check: ReportModel['checks'][number], platform: Platform, ctx: ExportContext) {
  const meta = getCheck(check.id)
  const helpUri = `${ctx.baseUrl}/docs/checks#${encodeURIComponent(check.id)}`
  const fix = fixText(check.id, platform, check.summary)
  const where = platform === 'generic' ? '' : ` (${platform})`
  // Fixes with a snippet (a config block on the lines after the first) keep their layout in a code block.
  const fixMarkdown = fix.includes('\n') ? `\`\`\`text\n${fix.replace(/`{3,}/g, '')}\n\`\`\`` : fix
  const severity = meta?.severity ?? check.severity
  const category = meta?.category ?? check.category
  const security = SECURITY_CATEGORIES.has(category)
  return {
    id: check.id,
    name: pascal(check.id),
    shortDescription: { text: meta?.title ?? check.title },
    fullDescription: { text: meta ? `${meta.description} ${meta.why}` : check.title },
    defaultConfiguration: { level: SARIF_LEVEL[severity] },
    help: {
      text: `How to fix${where}: ${fix}\n\nMore: ${helpUri}`,
      markdown: `**How to fix${where}**\n\n${fixMarkdown}\n\n[${meta?.title ?? check.id}](${helpUri})`,
    },
    helpUri,
    properties: {
      category,
      severity,
      // `security` makes GitHub list the alert as a security alert and read its security-severity.
      tags: [...new Set(security ? ['security', category] : [category])],
      ...(security ? { 'security-severity': SECURITY_SEVERITY[severity], precision: 'high' } : {}),
    },
  }
}

/** Where a result is in the repository: line 1 of the file, as GitHub needs a region to show it. */
const physical = (uri: string, srcRoot: boolean) => ({
  artifactLocation: srcRoot ? { uri, uriBaseId: '%SRCROOT%' } : { uri },
  region: { startLine: 1 },
})

function result(f: ModelFinding, ruleIndex: number, platform: Platform, ctx: ExportContext) {
  const page = f.pages[0]!
  const file = fixFile(f.checkId, platform)
  const mapped = ctx.repositoryPath ? repositoryPathOf(ctx.repositoryPath) : null
  const fixLocation = file
    ? [{ id: 1, physicalLocation: physical(file, true), message: { text: `The fix for ${f.checkId} goes in ${file} (${platform}).` } }]
    : []
  const more = f.pageCount > 1 ? ` (and ${f.pageCount - 1} more page${f.pageCount === 2 ? '' : 's'})` : ''
  return {
    ruleId: f.checkId,
    ruleIndex,
    level: SARIF_LEVEL[f.severity],
    message: { text: `${f.title}: ${f.summary}\nPage: ${page}${more}${file ? `\nFix in ${file} (${platform}).` : ''}` },
    locations: [{ physicalLocation: mapped ? physical(mapped, true) : physical(pageReference(page), false) }],
    ...(fixLocation.length ? { relatedLocations: fixLocation } : {}),
    partialFingerprints: { [FINGERPRINT_KEY]: f.fingerprint },
    properties: {
      page,
      status: f.status,
      severity: f.severity,
      impact: f.impact,
      pageCount: f.pageCount,
      pages: f.pages.slice(0, 10),
    },
  }
}

export function toSarif(model: ReportModel, ctx: ExportContext): string {
  const checks = [...model.checks]
  // A finding always has its check in the report; this only guards a stored report of another shape.
  for (const f of model.findings) {
    if (!checks.some((c) => c.id === f.checkId)) checks.push({ ...f, id: f.checkId })
  }
  const index = new Map(checks.map((c, i) => [c.id, i]))
  const log = {
    $schema: SARIF_SCHEMA_URI,
    version: '2.1.0',
    runs: [
      {
        tool: {
          driver: {
            name: 'App Audit',
            version: ctx.version,
            semanticVersion: ctx.version,
            informationUri: `${ctx.baseUrl}/docs`,
            rules: checks.map((c) => rule(c, model.platform, ctx)),
          },
        },
        // One category per app (its host, without a port that changes between CI runs), so a repository
        // that uploads several apps' results keeps them apart. It wins over upload-sarif's `category`.
        automationDetails: { id: `appaudit/${pageReference(model.url).split('/')[0]}/` },
        results: model.findings.map((f) => result(f, index.get(f.checkId)!, model.platform, ctx)),
        properties: {
          kind: model.kind,
          id: model.id,
          url: model.url,
          score: model.score,
          grade: model.grade,
          checksVersion: model.checksVersion,
          createdAt: model.createdAt,
          platform: model.platform,
        },
      },
    ],
  }
  return `${JSON.stringify(log, null, 2)}\n`
}
