// The viewer page: one self-contained HTML document (no external resources) whose script reads the token
// from the URL fragment, which browsers never send to a server, and hands it over as the socket's first
// message. Script and style are allowed by hash, so the CSP needs neither 'unsafe-inline' nor nonces.
import { createHash } from 'node:crypto'
import { CLOSE_ENDED, CLOSE_POLICY } from '../../shared/protocol/viewer.ts'

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
.notice{max-width:40em;margin:4em auto;padding:1.5em 2em;background:#1d1d1d;border-radius:6px}
.notice h1{font-size:1.4em;margin:0 0 .5em}a{color:#9cf}code{background:#333;padding:0 .25em}
[hidden]{display:none!important}
`

// Plain ES2017 so any current browser runs it. Everything the server sends is JSON text. The client sends
// the token once, then only which lane to follow (focus:N, focus:auto): the crawl's pages are never touched.
const SCRIPT = `
(function () {
  var $ = function (id) { return document.getElementById(id) };
  var token = '';
  try { token = decodeURIComponent(location.hash.slice(1)) } catch (e) { /* a mangled link: not valid */ }
  var shown = 0, started = 0, lanes = 0, following = 'auto', stamps = [];
  var STATES = { waiting: 'waiting for the first page', crawling: 'crawling', completed: 'finished', failed: 'failed', cancelled: 'cancelled' };
  function notice(kind) {
    $('live').hidden = true;
    $(kind).hidden = false;
    document.title = $(kind).querySelector('h1').textContent;
  }
  function setState(s) { $('state').textContent = STATES[s] || s; $('state').className = s; }
  function elapsed() {
    if (!started) return;
    var s = Math.max(0, Math.round((Date.now() - started) / 1000));
    $('elapsed').textContent = Math.floor(s / 60) + ':' + ('0' + (s % 60)).slice(-2);
  }
  setInterval(elapsed, 1000);
  function fps() {
    var now = Date.now();
    while (stamps.length && now - stamps[0] > 2000) stamps.shift();
    $('fps').textContent = (stamps.length / 2).toFixed(1);
  }
  setInterval(fps, 500);
  function laneButtons(n) {
    if (n === lanes) return;
    lanes = n;
    var box = $('lanes');
    while (box.firstChild) box.removeChild(box.firstChild);
    if (n < 2) return;
    var choices = ['auto'];
    for (var i = 0; i < n; i++) choices.push(String(i));
    choices.forEach(function (c) {
      var b = document.createElement('button');
      b.type = 'button';
      b.textContent = c === 'auto' ? 'latest page' : 'lane ' + (Number(c) + 1);
      b.setAttribute('aria-pressed', String(c === following));
      b.onclick = function () {
        following = c;
        if (ws.readyState === 1) ws.send('focus:' + c);
        Array.prototype.forEach.call(box.children, function (x) { x.setAttribute('aria-pressed', String(x === b)); });
      };
      box.appendChild(b);
    });
  }
  if (!token) { notice('invalid'); return; }
  var path = location.pathname.replace(/\\/+$/, '');
  var ws = new WebSocket((location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + path + '/ws');
  ws.onopen = function () { ws.send(token); setState('waiting'); };
  ws.onmessage = function (ev) {
    var m; try { m = JSON.parse(ev.data) } catch (e) { return }
    if (m.type === 'ready') { setState('waiting'); }
    else if (m.type === 'frame' && typeof m.data === 'string') {
      $('screen').src = 'data:image/jpeg;base64,' + m.data;
      shown++;
      stamps.push(Date.now());
      $('frames').textContent = String(shown);
      if (m.url) $('url').textContent = m.url;
      if (typeof m.lanes === 'number') laneButtons(m.lanes);
      if (typeof m.lane === 'number') $('lane').textContent = lanes > 1 ? 'lane ' + (m.lane + 1) : '';
    }
    else if (m.type === 'progress') {
      setState(m.state);
      $('scanned').textContent = String(m.pagesScanned + m.pagesFailed);
      $('discovered').textContent = String(m.pagesDiscovered);
      if (m.currentUrl && !shown) $('url').textContent = m.currentUrl;
      var f = m.findings || {};
      ['critical', 'high', 'medium', 'low'].forEach(function (k) { $('f-' + k).textContent = String(f[k] || 0); });
      if (m.startedAt && !started) { started = Date.parse(m.startedAt) || 0; elapsed(); }
      if (typeof m.lanes === 'number') laneButtons(m.lanes);
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
<header><b>Live crawl</b><span id="state" class="waiting">starting</span>
<span class="stat">pages <b id="scanned">0</b> of <b id="discovered">0</b></span>
<span class="stat" id="findings">findings <b class="critical" id="f-critical">0</b> critical · <b class="high" id="f-high">0</b> high · <b class="medium" id="f-medium">0</b> medium · <b class="low" id="f-low">0</b> low</span>
<span class="stat">elapsed <b id="elapsed">0:00</b></span>
<span class="stat"><b id="fps">0.0</b> fps · frames <b id="frames">0</b></span>
<span id="url"></span><span class="stat" id="lane"></span><span id="lanes" aria-label="Which lane to follow"></span></header>
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
