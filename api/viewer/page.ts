// The viewer page: one self-contained HTML document (no external resources) whose script (client.ts,
// bundled when this module loads) reads the token from the URL fragment, which browsers never send to a
// server, and hands it over as the socket's first message. Script and style are allowed by hash, so the
// CSP needs neither 'unsafe-inline' nor nonces.
import { createHash } from 'node:crypto'
import { html, raw } from '../../shared/lib/html.ts'
import { bundleClientScript } from '../http/client-script.ts'

const STYLE = `
body{margin:0;font:15px/1.45 system-ui,sans-serif;background:#111;color:#eee}
header{display:flex;flex-wrap:wrap;gap:.4em 1.2em;align-items:baseline;padding:.5em 1em;background:#1d1d1d}
header b{white-space:nowrap}#url{flex:1 1 20em;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;color:#9cf}
#state{white-space:nowrap;padding:0 .5em;border-radius:3px;background:#333}
#state.crawling{background:#1f5f2f}#state.completed{background:#245}#state.failed,#state.cancelled{background:#6a2323}
.stat{white-space:nowrap;color:#bbb}.stat b{color:#eee;font-weight:600}
#findings .critical{color:#ff6b6b}#findings .high{color:#ffa94d}#findings .medium{color:#ffd43b}#findings .low{color:#bbb}
#lanes{display:flex;gap:.3em}#lanes button{font:inherit;font-size:13px;background:#333;color:#eee;border:1px solid #555;border-radius:3px;padding:0 .5em;cursor:pointer}
#lanes button[aria-pressed=true]{background:#246;border-color:#69c}
main{display:flex;justify-content:center;padding:1em}
#screen{max-width:100%;height:auto;background:#000;min-height:120px}
#placeholder{width:1280px;max-width:100%;aspect-ratio:16/10;display:flex;flex-direction:column;align-items:center;justify-content:center;gap:.5em;background:#1a1a1a;border:1px dashed #444;border-radius:4px;color:#bbb;text-align:center}
#placeholder b{color:#eee;font-size:1.2em}
#final{font-size:1.15em}#final b{color:#fff}
.notice{max-width:40em;margin:4em auto;padding:1.5em 2em;background:#1d1d1d;border-radius:6px}
.notice h1{font-size:1.4em;margin:0 0 .5em}a{color:#9cf}code{background:#333;padding:0 .25em}
[hidden]{display:none!important}
`

const SCRIPT = await bundleClientScript(new URL('./client.ts', import.meta.url))

const hash = (s: string) => `'sha256-${createHash('sha256').update(s).digest('base64')}'`

export const VIEWER_CSP = [
  "default-src 'none'",
  `script-src ${hash(SCRIPT)}`,
  `style-src ${hash(STYLE)}`,
  // 'self' covers ws:/wss: to the same host in CSP level 3 browsers.
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')

export function viewerPage(auditId: string, baseUrl: string, signIn = true): string {
  // Every ending points a person at the audit's report page in the dashboard: the owner's page, so a
  // signed-out browser is sent to sign in first and another account gets 404.
  // By its path: the page names no other origin (the dashboard sends another host to BASE_URL's itself).
  const report = `${new URL(baseUrl).pathname.replace(/\/+$/, '')}/dashboard/audits/${auditId}`
  // A server without sign-in has no dashboard: the report is read over MCP instead.
  const results = signIn
    ? html`<p><a class="report-link" href="${report}">See the audit's report</a>: score, findings by impact with
their evidence, the fix for your platform and every page crawled. It is ready once the crawl has ended.</p>`
    : html`<p>The audit's report (score, findings by impact with their evidence, every page crawled) is read over MCP, once
the crawl has ended: <code>get_audit {"auditId": "${auditId}"}</code>. This server has no dashboard sign-in.</p>`
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Live crawl ${auditId}</title>
<style>${raw(STYLE)}</style></head>
<body>
<div id="live">
<header><b>Live crawl</b><span id="state" class="waiting">starting</span>
<span class="stat">pages <b id="scanned">0</b> of <b id="discovered">0</b></span>
<span class="stat" id="findings">findings <b class="critical" id="f-critical">0</b> critical · <b class="high" id="f-high">0</b> high · <b class="medium" id="f-medium">0</b> medium · <b class="low" id="f-low">0</b> low</span>
<span class="stat">elapsed <b id="elapsed">0:00</b></span>
<span class="stat"><b id="fps">0.0</b> fps · frames <b id="frames">0</b></span>
<span id="url"></span><span class="stat" id="lane"></span><span id="lanes" aria-label="Which lane to follow"></span></header>
<main><div id="placeholder" role="status"><b>The crawler's browser appears here</b>
<span>State: <span id="placeholder-state">connecting</span>. Its first page shows as soon as it opens.</span></div>
<canvas id="screen" width="1280" height="800" role="img" aria-label="The crawler's browser, live" hidden></canvas></main>
</div>
<section id="ended" class="notice" hidden><h1>This crawl has ended</h1>
<p id="final" hidden>Score <b id="final-score"></b> out of 100 over <b id="final-pages"></b> pages; findings
<span id="final-findings"></span>.</p>
<p>The live view stops when the crawl ends, and this link no longer works.</p>${results}</section>
<section id="invalid" class="notice" hidden><h1>This viewer link is not valid</h1>
<p>Viewer links work only while their crawl runs. The link may be incomplete, or its crawl may have ended.</p>${results}</section>
<section id="lost" class="notice" hidden><h1>The live view was interrupted</h1>
<p>The connection to the service was lost. Reload the page to try again while the crawl runs.</p>${results}</section>
<script>${raw(SCRIPT)}</script>
</body></html>
`.toString()
}
