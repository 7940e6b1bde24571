// A standalone HTML page a person opens from a CI artifact: inline CSS, no scripts, nothing loaded from
// anywhere (its own Content-Security-Policy says so, in case a browser opens it from disk). Score, the
// findings by impact with the fix, their evidence, and every check. Everything from the target is escaped.
import type { ReportModel } from './model.ts'
import { escapeMarkup as h, evidenceText } from './escape.ts'
import { fixText } from './sarif.ts'

const CSS = `
body{font:15px/1.5 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#1b1f24;background:#f6f8fa}
main{max-width:1100px;margin:0 auto;padding:24px}
header{display:flex;gap:24px;align-items:center;background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:16px 24px}
.score{font-size:44px;font-weight:700}.grade{font-size:28px;font-weight:600;color:#57606a}
.meta{color:#57606a;overflow-wrap:anywhere}
h2{margin-top:32px}
table{border-collapse:collapse;width:100%;background:#fff}
th,td{border:1px solid #d0d7de;padding:6px 10px;text-align:left;vertical-align:top;overflow-wrap:anywhere}
th{background:#f0f3f6}
.num{text-align:right;white-space:nowrap}
.fail{color:#cf222e;font-weight:600}.warn{color:#9a6700;font-weight:600}.pass{color:#1a7f37}.skipped,.info{color:#57606a}.error{color:#8250df}
details{background:#fff;border:1px solid #d0d7de;border-radius:6px;margin:8px 0;padding:8px 12px}
summary{cursor:pointer;font-weight:600}
pre{background:#f6f8fa;padding:10px;overflow:auto;white-space:pre-wrap;overflow-wrap:anywhere;font-size:13px}
code{font-size:13px}
`

const CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"

export function toHtml(model: ReportModel): string {
  const audit = model.kind === 'audit'
  const s = model.summary
  const findingRows = model.findings
    .map(
      (f) =>
        `<tr><td class="num">${f.impact}</td><td><code>${h(f.checkId)}</code> ${h(f.title)}</td><td>${h(f.severity)}</td>` +
        `<td class="${h(f.status)}">${h(f.status)}</td>${audit ? `<td class="num">${f.pageCount}</td>` : ''}<td>${h(f.summary)}</td></tr>`,
    )
    .join('\n')
  const details = model.findings
    .map((f) => {
      const fix = fixText(f.checkId, model.platform, f.summary)
      const pages = audit
        ? `<p>Found on ${f.pageCount} page${f.pageCount === 1 ? '' : 's'}:</p><ul>${f.pages
            .slice(0, 20)
            .map((p) => `<li>${h(p)}</li>`)
            .join('')}</ul>`
        : ''
      return (
        `<details><summary><code>${h(f.checkId)}</code> ${h(f.title)} <span class="${h(f.status)}">${h(f.status)}</span></summary>\n` +
        `<p>${h(f.summary)}</p>${pages}<h4>Evidence</h4><pre>${h(evidenceText(f.evidence))}</pre>` +
        `<h4>How to fix${model.platform === 'generic' ? '' : ` (${h(model.platform)})`}</h4><pre>${h(fix)}</pre></details>`
      )
    })
    .join('\n')
  const checkRows = model.checks
    .map(
      (c) =>
        `<tr><td><code>${h(c.id)}</code></td><td>${h(c.title)}</td><td>${h(c.category)}</td><td>${h(c.severity)}</td>` +
        `<td class="${h(c.status)}">${h(c.status)}</td><td>${h(c.summary)}</td></tr>`,
    )
    .join('\n')
  const title = `App Audit: ${model.score}/100 (${model.grade}) for ${model.url}`
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${h(title)}</title>
<style>${CSS}</style>
</head>
<body>
<main>
<header>
<div><span class="score">${model.score}</span><span class="meta">/100</span></div>
<div class="grade">${h(model.grade)}</div>
<div class="meta"><div><strong>${h(model.url)}</strong></div>
<div>${audit ? 'Audit' : 'Scan'} <code>${h(model.id)}</code> · ${h(model.createdAt)} · checks ${h(model.checksVersion)}</div>
<div>${s.fail} failing · ${s.warn} warning · ${s.pass} passing · ${s.skipped} skipped</div></div>
</header>
<h2>Findings by impact</h2>
${
  model.findings.length === 0
    ? '<p>No failing or warning checks.</p>'
    : `<table><thead><tr><th>Impact</th><th>Check</th><th>Severity</th><th>Status</th>${audit ? '<th>Pages</th>' : ''}<th>What was found</th></tr></thead>
<tbody>
${findingRows}
</tbody></table>
<h2>Evidence and fixes</h2>
${details}`
}
<h2>Every check</h2>
<table><thead><tr><th>Check</th><th>Title</th><th>Category</th><th>Severity</th><th>Status</th><th>Summary</th></tr></thead>
<tbody>
${checkRows}
</tbody></table>
</main>
</body>
</html>
`
}
