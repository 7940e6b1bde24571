// SARIF 2.1.0 (GitHub code scanning and other SARIF viewers): one run; one rule per check of the report,
// with its description and how to fix it; one result per finding (fail and warn), located at the page and,
// when the fix belongs in a known file of the detected platform, at that file too. partialFingerprints
// carry the finding's fingerprint, so a viewer tracks the same finding across uploads.
import { getCheck } from '../../shared/checks/registry.ts'
import type { FixKind, Platform, Severity } from '../../shared/checks/types.ts'
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

// GitHub ranks security alerts by this property (a CVSS-like number as a string); other viewers ignore it.
const SECURITY_SEVERITY: Readonly<Record<Severity, string>> = { critical: '9.5', high: '8.0', medium: '5.5', low: '3.0', info: '0.0' }
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
  return {
    id: check.id,
    name: pascal(check.id),
    shortDescription: { text: meta?.title ?? check.title },
    fullDescription: { text: meta ? `${meta.description} ${meta.why}` : check.title },
    help: {
      text: `How to fix${where}: ${fix}\n\nMore: ${helpUri}`,
      markdown: `**How to fix${where}**\n\n${fixMarkdown}\n\n[${meta?.title ?? check.id}](${helpUri})`,
    },
    helpUri,
    properties: {
      category,
      severity,
      tags: [category],
      ...(SECURITY_CATEGORIES.has(category) ? { 'security-severity': SECURITY_SEVERITY[severity] } : {}),
    },
  }
}

function result(f: ModelFinding, ruleIndex: number, platform: Platform) {
  const file = fixFile(f.checkId, platform)
  const pageLocation = { physicalLocation: { artifactLocation: { uri: f.pages[0]! } } }
  const fileLocation = file
    ? [
        {
          physicalLocation: { artifactLocation: { uri: file, uriBaseId: '%SRCROOT%' } },
          message: { text: `The fix for ${f.checkId} goes in ${file} (${platform}).` },
        },
      ]
    : []
  return {
    ruleId: f.checkId,
    ruleIndex,
    level: SARIF_LEVEL[f.severity],
    message: { text: `${f.title}: ${f.summary}` },
    locations: [pageLocation, ...fileLocation],
    partialFingerprints: { [FINGERPRINT_KEY]: f.fingerprint },
    properties: { status: f.status, severity: f.severity, impact: f.impact, pageCount: f.pageCount, pages: f.pages.slice(0, 10) },
  }
}

export function toSarif(model: ReportModel, ctx: ExportContext): string {
  const checks = [...model.checks]
  // A finding always has its check in the report; this only guards a stored report of another shape.
  for (const f of model.findings) {
    if (!checks.some((c) => c.id === f.checkId)) checks.push({ ...f, id: f.checkId })
  }
  const index = new Map(checks.map((c, i) => [c.id, i]))
  let host = model.url
  try {
    host = new URL(model.url).host
  } catch {}
  const log = {
    $schema: SARIF_SCHEMA_URI,
    version: '2.1.0',
    runs: [
      {
        tool: {
          driver: {
            name: 'App Audit',
            version: ctx.version,
            informationUri: `${ctx.baseUrl}/docs`,
            rules: checks.map((c) => rule(c, model.platform, ctx)),
          },
        },
        // One category per app, so a repository that uploads several apps' results keeps them apart.
        automationDetails: { id: `appaudit/${host}/` },
        results: model.findings.map((f) => result(f, index.get(f.checkId)!, model.platform)),
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
