// The viewer page: one self-contained HTML document (no external resources) whose script reads the token
// from the URL fragment, which browsers never send to a server, and hands it over as the socket's first
// message. Script and style are allowed by hash, so the CSP needs neither 'unsafe-inline' nor nonces.
import { createHash } from 'node:crypto'
import { CLOSE_ENDED, CLOSE_POLICY } from '../../shared/viewer.ts'

const STYLE = `
body{margin:0;font:15px/1.45 system-ui,sans-serif;background:#111;color:#eee}
header{display:flex;gap:1em;align-items:baseline;padding:.5em 1em;background:#1d1d1d}
header b{white-space:nowrap}#url{flex:1;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;color:#9cf}
#status{white-space:nowrap;color:#aaa}
main{display:flex;justify-content:center;padding:1em}
#screen{max-width:100%;height:auto;background:#000;min-height:120px}
.notice{max-width:40em;margin:4em auto;padding:1.5em 2em;background:#1d1d1d;border-radius:6px}
.notice h1{font-size:1.4em;margin:0 0 .5em}a{color:#9cf}code{background:#333;padding:0 .25em}
[hidden]{display:none!important}
`

// Plain ES2017 so any current browser runs it. Everything the server sends is JSON text; the client sends
// only the token, once: the server acts on nothing else.
const SCRIPT = `
(function () {
  var $ = function (id) { return document.getElementById(id) };
  var token = '';
  try { token = decodeURIComponent(location.hash.slice(1)) } catch (e) { /* a mangled link: not valid */ }
  var shown = 0;
  function notice(kind) {
    $('live').hidden = true;
    $(kind).hidden = false;
    document.title = $(kind).querySelector('h1').textContent;
  }
  if (!token) { notice('invalid'); return; }
  var path = location.pathname.replace(/\\/+$/, '');
  var ws = new WebSocket((location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + path + '/ws');
  ws.onopen = function () { ws.send(token); $('status').textContent = 'connecting'; };
  ws.onmessage = function (ev) {
    var m; try { m = JSON.parse(ev.data) } catch (e) { return }
    if (m.type === 'ready') { $('status').textContent = 'live, waiting for the next frame'; }
    else if (m.type === 'frame' && typeof m.data === 'string') {
      $('screen').src = 'data:image/jpeg;base64,' + m.data;
      shown++;
      $('frames').textContent = String(shown);
      $('url').textContent = m.url || '';
      $('status').textContent = 'live';
    }
  };
  ws.onclose = function (ev) {
    if (ev.code === ${CLOSE_ENDED}) notice('ended');
    else if (ev.code === ${CLOSE_POLICY}) notice('invalid');
    else notice('lost');
  };
})();
`

const hash = (s: string) => `'sha256-${createHash('sha256').update(s).digest('base64')}'`

export const VIEWER_CSP = [
  "default-src 'none'",
  `script-src ${hash(SCRIPT)}`,
  `style-src ${hash(STYLE)}`,
  'img-src data:',
  // 'self' covers ws:/wss: to the same host in CSP level 3 browsers.
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)

export function viewerPage(auditId: string, baseUrl: string): string {
  const id = escapeHtml(auditId)
  // Every ending points a person at the audit's report page in the dashboard: the owner's page, so a
  // signed-out browser is sent to sign in first and another account gets 404.
  // By its path: the page names no other origin (the dashboard sends another host to BASE_URL's itself).
  const report = escapeHtml(`${new URL(baseUrl).pathname.replace(/\/+$/, '')}/dashboard/audits/${auditId}`)
  const results = `<p><a class="report-link" href="${report}">See the audit's report</a>: score, findings by impact with
their evidence, the fix for your platform and every page crawled. It is ready once the crawl has ended.</p>`
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Live crawl ${id}</title>
<style>${STYLE}</style></head>
<body>
<div id="live">
<header><b>Live crawl</b><span id="url"></span><span id="status">starting</span><span>frames: <span id="frames">0</span></span></header>
<main><img id="screen" alt="The crawler's browser, live" width="1280" height="720"></main>
</div>
<section id="ended" class="notice" hidden><h1>This crawl has ended</h1>
<p>The live view stops when the crawl ends, and this link no longer works.</p>${results}</section>
<section id="invalid" class="notice" hidden><h1>This viewer link is not valid</h1>
<p>Viewer links work only while their crawl runs. The link may be incomplete, or its crawl may have ended.</p>${results}</section>
<section id="lost" class="notice" hidden><h1>The live view was interrupted</h1>
<p>The connection to the service was lost. Reload the page to try again while the crawl runs.</p>${results}</section>
<script>${SCRIPT}</script>
</body></html>
`
}
