// Markdown for a pull-request comment, a terminal or an agent's context: the score and grade, a table of the
// findings by impact with the fix in one line, and the evidence in a collapsed section. It reads as text
// unrendered: anything from the target is escaped only where Markdown would read it as syntax (escape.ts),
// never turned into entities, and the evidence is indented JSON in a fenced code block, where nothing is
// read as Markdown, HTML, a link or a mention.
import type { ReportModel } from './model.ts'
import { clip, codeBlock, evidenceText, inlineCode as code, escapeMarkdown as md } from './escape.ts'
import { fixText } from './sarif.ts'

/** Rows in the table and findings in the details: a comment stays readable (and under GitHub's 65,536 characters). */
const MAX_ROWS = 50
const MAX_DETAILS = 30

export function toMarkdown(model: ReportModel): string {
  const { summary } = model
  const audit = model.kind === 'audit'
  const lines = [
    `## App Audit: ${model.score}/100 (${model.grade})`,
    '',
    `${audit ? 'Audit' : 'Scan'} ${code(model.id)} of ${md(model.url)} · checks ${md(model.checksVersion)} · ` +
      `${summary.fail} failing, ${summary.warn} warning, ${summary.pass} passing`,
    '',
  ]
  if (model.findings.length === 0) {
    lines.push('No failing or warning checks.', '')
    return lines.join('\n')
  }
  lines.push(
    audit ? '| Impact | Check | Severity | Status | Pages | Fix |' : '| Impact | Check | Severity | Status | Fix |',
    audit ? '|---:|---|---|---|---:|---|' : '|---:|---|---|---|---|',
  )
  for (const f of model.findings.slice(0, MAX_ROWS)) {
    const fix = md(clip(fixText(f.checkId, 'generic', f.summary), 200))
    const cells = [
      String(f.impact),
      `${code(f.checkId)} ${md(f.title)}`,
      f.severity,
      f.status,
      ...(audit ? [String(f.pageCount)] : []),
      fix,
    ]
    lines.push(`| ${cells.join(' | ')} |`)
  }
  if (model.findings.length > MAX_ROWS) lines.push('', `…and ${model.findings.length - MAX_ROWS} more findings.`)
  lines.push(
    '',
    '<details>',
    `<summary>Evidence for ${Math.min(model.findings.length, MAX_DETAILS)} of ${model.findings.length} findings</summary>`,
    '',
  )
  for (const f of model.findings.slice(0, MAX_DETAILS)) {
    lines.push(`#### ${code(f.checkId)} ${md(f.title)}`, '', md(f.summary), '')
    if (audit) lines.push(`Found on ${f.pageCount} page${f.pageCount === 1 ? '' : 's'}, e.g. ${md(f.pages[0] ?? model.url)}`, '')
    lines.push(codeBlock(evidenceText(f.evidence, 1_500), 'json'), '')
  }
  lines.push('</details>', '')
  return lines.join('\n')
}
