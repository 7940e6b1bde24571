// A standalone HTML page a person opens from a CI artifact: inline CSS, no scripts, nothing loaded from
// anywhere (its own Content-Security-Policy says so, in case a browser opens it from disk). Score, the
// findings by impact with the fix, their evidence, and every check. Built with html`...`, so everything from
// the target is escaped.
import type { ReportModel } from '../../shared/report/export/model.ts'
import { type Html, html, joinHtml, raw } from '../../shared/lib/html.ts'
import { evidenceText, usable } from '../../shared/report/export/escape.ts'
import { fixText } from '../../shared/report/export/sarif.ts'

const CSS = raw(`
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
`)

/** A constant with no double quote, so it goes in the attribute as it is (its 'none' stays readable). */
/** A constant with no double quote: it goes in the attribute as it is, its 'none' readable. */
const CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"

export function toHtml(model: ReportModel): string {
  const audit = model.kind === 'audit'
  const s = model.summary
  const title = `App Audit: ${model.score}/100 (${model.grade}) for ${model.url}`
  // The whole page through usable(): a character XML and HTML cannot carry becomes U+FFFD wherever it came from.
  return usable(
    html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${raw(CSP)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title}</title>
<style>${CSS}</style>
</head>
<body>
<main>
<header>
<div><span class="score">${model.score}</span><span class="meta">/100</span></div>
<div class="grade">${model.grade}</div>
<div class="meta"><div><strong>${model.url}</strong></div>
<div>${audit ? 'Audit' : 'Scan'} <code>${model.id}</code> · ${model.createdAt} · checks ${model.checksVersion}</div>
<div>${s.fail} failing · ${s.warn} warning · ${s.pass} passing · ${s.skipped} skipped</div></div>
</header>
<h2>Findings by impact</h2>
${model.findings.length === 0 ? html`<p>No failing or warning checks.</p>` : findingsHtml(model)}
<h2>Every check</h2>
<table><thead><tr><th>Check</th><th>Title</th><th>Category</th><th>Severity</th><th>Status</th><th>Summary</th></tr></thead>
<tbody>
${joinHtml(
  model.checks.map(
    (c) =>
      html`<tr><td><code>${c.id}</code></td><td>${c.title}</td><td>${c.category}</td><td>${c.severity}</td><td class="${c.status}">${c.status}</td><td>${c.summary}</td></tr>`,
  ),
  '\n',
)}
</tbody></table>
</main>
</body>
</html>
`.toString(),
  )
}

/** The findings table, then each finding's evidence and fix. */
function findingsHtml(model: ReportModel): Html {
  const audit = model.kind === 'audit'
  const rows = model.findings.map(
    (f) =>
      html`<tr><td class="num">${f.impact}</td><td><code>${f.checkId}</code> ${f.title}</td><td>${f.severity}</td><td class="${f.status}">${f.status}</td>${
        audit && html`<td class="num">${f.pageCount}</td>`
      }<td>${f.summary}</td></tr>`,
  )
  const details = model.findings.map((f) => {
    const pages =
      audit &&
      html`<p>Found on ${f.pageCount} page${f.pageCount === 1 ? '' : 's'}:</p><ul>${f.pages.slice(0, 20).map((p) => html`<li>${p}</li>`)}</ul>`
    return html`<details><summary><code>${f.checkId}</code> ${f.title} <span class="${f.status}">${f.status}</span></summary>
<p>${f.summary}</p>${pages}<h4>Evidence</h4><pre>${evidenceText(f.evidence)}</pre><h4>How to fix${
      model.platform !== 'generic' && ` (${model.platform})`
    }</h4><pre>${fixText(f.checkId, model.platform, f.summary)}</pre></details>`
  })
  return html`<table><thead><tr><th>Impact</th><th>Check</th><th>Severity</th><th>Status</th>${audit && html`<th>Pages</th>`}<th>What was found</th></tr></thead>
<tbody>
${joinHtml(rows, '\n')}
</tbody></table>
<h2>Evidence and fixes</h2>
${joinHtml(details, '\n')}`
}
