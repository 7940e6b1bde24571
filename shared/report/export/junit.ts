// JUnit XML, for CI systems that show test results: one testsuite for the report, one testcase per check
// (classname = its category), <failure> for fail and warn (the summary, then the evidence in short and the
// fix), <error> for a check that could not run, <skipped/> for a skipped one. Every value from the target is
// escaped; the shape follows the JUnit schema Jenkins reads (the tests validate against it).
import type { ReportModel } from './model.ts'
import { clip, escapeMarkup as x, evidenceSummary } from './escape.ts'
import { fixText } from './sarif.ts'

export function toJunit(model: ReportModel): string {
  const byCheck = new Map<string, ReportModel['findings']>()
  for (const f of model.findings) byCheck.set(f.checkId, [...(byCheck.get(f.checkId) ?? []), f])

  let failures = 0
  let errors = 0
  let skipped = 0
  const cases = model.checks.map((c) => {
    const open = `    <testcase classname="${x(c.category)}" name="${x(`${c.id}: ${c.title}`)}" time="0"`
    if (c.status === 'fail' || c.status === 'warn') {
      failures++
      const findings = byCheck.get(c.id) ?? []
      const lines = [`${c.status} · severity ${c.severity}`]
      for (const f of findings) {
        lines.push('', f.summary, `Evidence: ${evidenceSummary(f.evidence)}`)
        if (model.kind === 'audit') lines.push(`Pages (${f.pageCount}): ${f.pages.slice(0, 10).join(' ')}`)
      }
      lines.push('', `Fix: ${clip(fixText(c.id, model.platform, c.summary), 1_000)}`)
      const message = findings[0]?.summary ?? c.summary
      return `${open}>\n      <failure type="${c.status}" message="${x(message)}">${x(lines.join('\n'))}</failure>\n    </testcase>`
    }
    if (c.status === 'error') {
      errors++
      return `${open}>\n      <error type="error" message="${x(c.summary)}"/>\n    </testcase>`
    }
    if (c.status === 'skipped') {
      skipped++
      return `${open}>\n      <skipped/>\n    </testcase>`
    }
    return `${open}/>`
  })

  const name = `App Audit ${model.kind} of ${model.url}`
  const properties = {
    id: model.id,
    kind: model.kind,
    url: model.url,
    score: String(model.score),
    grade: model.grade,
    checksVersion: model.checksVersion,
    platform: model.platform,
  }
  const props = Object.entries(properties)
    .map(([k, v]) => `      <property name="${x(k)}" value="${x(v)}"/>`)
    .join('\n')
  const counts = `tests="${model.checks.length}" failures="${failures}" errors="${errors}"`
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="App Audit" ${counts} time="0">`,
    `  <testsuite name="${x(name)}" ${counts} skipped="${skipped}" time="0" timestamp="${x(model.createdAt.replace(/\.\d+Z$/, ''))}" id="${x(model.id)}">`,
    '    <properties>',
    props,
    '    </properties>',
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n')
}
