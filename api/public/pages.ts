// The HTML a person reads: the front page, the /docs index and one page per doc. Bodies are composed once
// at start; only the layout around them (its nonce) is made per response, in index.ts.
import { type Html, html, joinHtml, raw } from '../../shared/lib/html.ts'
import type { DocPage, PublicDocuments } from './service.ts'

/** Styles for rendered markdown, beside the layout's own (the layout's style sheet has no rules for it). */
export const DOC_STYLE = raw(`
article h1{font-size:1.7rem;margin-top:0}article h2{margin-top:2rem;border-bottom:1px solid #dde1e6;padding-bottom:.2rem}
article h4{margin-bottom:.3rem}article pre{background:#eef1f4;padding:.8rem 1rem;border-radius:6px;overflow:auto;font-size:13px}
article pre code{background:none;padding:0;word-break:normal}article table{margin:1rem 0;font-size:14px}
article td,article th{vertical-align:top}nav.docs{font-size:14px;margin-bottom:1rem}nav.docs a{margin-right:.8rem}
ul.pages li{margin:.4rem 0}
`)

/** The header links of every public page. */
export const NAV = html`<a href="/docs">Docs</a><a href="/dashboard">Dashboard</a><a href="/llms.txt">llms.txt</a>`

const docLinks = (pages: readonly DocPage[]) =>
  joinHtml(
    pages.map((p) => html`<a href="/docs/${p.slug}">${p.title}</a>`),
    ' ',
  )

export function frontPageBody(baseUrl: string, version: string): Html {
  const mcp = `${baseUrl}/api/mcp`
  const config = JSON.stringify({ mcpServers: { appaudit: { type: 'http', url: mcp } } }, null, 2)
  return html`<article class="card"><h1>App Audit</h1>
<p>An audit service for web applications, spoken to over MCP. Point it at an app: it loads the page in a real browser,
probes it over plain HTTP, and returns a score, a grade, every check with its evidence, and advice ordered by impact
that a coding agent can act on.</p>
<p>MCP endpoint: <code>${mcp}</code></p>
<p>Add it to an MCP client (Claude Code, Cursor, VS Code and others); a client that speaks OAuth signs you in by itself:</p>
<pre><code>${config}</code></pre>
<ul class="pages">
<li><a href="/docs">Documentation</a>: getting started, every tool, every check, errors.</li>
<li><a href="/dashboard">Dashboard</a>: your apps, scans and audits, API keys and connected agents.</li>
<li><a href="/auth/login">Sign in</a>.</li>
<li><a href="/llms.txt">llms.txt</a> for language models, with <a href="/llms-full.txt">llms-full.txt</a>,
<a href="/api/skills.md">an agent skill</a> and <a href="/agent-prompt">a brief for a coding agent</a>.</li>
</ul>
<p class="muted">Version ${version}.</p></article>`
}

/** The plain-text front page, for curl and scripts (unchanged from before there were docs: scripts may read it). */
export const frontPageText = (baseUrl: string, version: string) =>
  `App Audit ${version}\nMCP endpoint: ${baseUrl}/api/mcp (POST JSON-RPC 2.0, Authorization: Bearer act_...)\n`

export function docsIndexBody(docs: PublicDocuments): Html {
  const item = (p: DocPage) =>
    html`<li><a href="/docs/${p.slug}">${p.title}</a>${p.summary && html`: ${p.summary}`} <a class="muted" href="/docs/${p.slug}.md">(markdown)</a></li>`
  const group = (title: string, pages: readonly DocPage[]) =>
    pages.length > 0 && html`<h2>${title}</h2><ul class="pages">${joinHtml(pages.map(item), '\n')}</ul>`
  return html`<article class="card"><h1>Documentation</h1>
${group(
  'Using App Audit',
  docs.pages.filter((p) => p.section === 'docs'),
)}
${group(
  'For coding agents',
  docs.pages.filter((p) => p.section === 'agents'),
)}
${group(
  'How it is built',
  docs.pages.filter((p) => p.section === 'optional'),
)}
<h2>For language models</h2><ul class="pages">
<li><a href="/llms.txt">llms.txt</a>: what this service is, with links to every page.</li>
<li><a href="/llms-full.txt">llms-full.txt</a>: every page in one markdown document.</li>
<li><a href="/api/skills.md">skills.md</a>: an agent skill for using the service while building.</li>
<li><a href="/agent-prompt">agent-prompt</a>: a ready-to-paste brief for a coding agent.</li>
</ul></article>`
}

export function docPageBody(page: DocPage, docs: PublicDocuments): Html {
  // page.html is marked's output through the renderer in markdown.ts, which escapes what it is given.
  return html`<nav class="docs">${docLinks(docs.pages)}</nav>
<article class="card">${raw(page.html)}</article>
<p class="muted"><a href="/docs/${page.slug}.md">This page as markdown</a> · <a href="/llms-full.txt">every page in one file</a></p>`
}
