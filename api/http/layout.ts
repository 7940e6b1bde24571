// Server-rendered pages of the dashboard, sign-in and consent screens: the shared layout and the headers
// every such page carries (never CORS; never framed; never cached; scripts by nonce only). Bodies are
// built with html`...` (shared/lib/html.ts), which escapes whatever it is given.
import { randomBytes } from 'node:crypto'
import { type Html, html, raw } from '../../shared/lib/html.ts'

export const newNonce = () => randomBytes(16).toString('base64')

/** Headers for any response of a page or a dashboard route: no framing, no caching, no sniffing. */
export function pageHeaders(nonce: string | null, extra: Record<string, string> = {}): Record<string, string> {
  const script = nonce ? `script-src 'nonce-${nonce}'` : `script-src 'none'`
  return {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'x-frame-options': 'DENY',
    // No form-action: Chromium applies it to the redirect after the consent form, which goes to the
    // client's own redirect URI (another origin, or a custom scheme like cursor://).
    'content-security-policy': `default-src 'none'; ${script}; style-src 'nonce-${nonce ?? 'none'}'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; frame-ancestors 'none'`,
    'x-content-type-options': 'nosniff',
    // same-origin, not no-referrer: with no-referrer browsers send "Origin: null" on the page's own POSTs,
    // which the Origin check must refuse.
    'referrer-policy': 'same-origin',
    ...extra,
  }
}

// Narrow screens (a phone is 360 to 430 px wide) get the same page with less padding: nothing may be wider
// than the window. Long unbroken text (URLs, ids) wraps anywhere rather than pushing the page sideways.
const STYLE = raw(`
*,::before,::after{box-sizing:border-box}
body{font:15px/1.5 system-ui,sans-serif;margin:0;color:#1b1f24;background:#f6f7f9}
header{background:#1b1f24;color:#fff;padding:.8rem 1.5rem;display:flex;flex-wrap:wrap;gap:.4rem 1.5rem;align-items:center}
header a{color:#cfd6df;text-decoration:none}header strong{color:#fff;margin-right:auto}header form{margin:0}
header span{overflow-wrap:anywhere;min-width:0}
main{max-width:60rem;margin:1.5rem auto;padding:0 1.5rem}
h1,h2,h3,h4,p,li,summary{overflow-wrap:anywhere}
.card{background:#fff;border:1px solid #dde1e6;border-radius:8px;padding:1.2rem 1.5rem;margin-bottom:1.2rem}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.4rem .5rem;border-bottom:1px solid #eceff2}td{overflow-wrap:anywhere}
button{font:inherit;padding:.45rem 1rem;border-radius:6px;border:1px solid #8a94a0;background:#fff;cursor:pointer}
button.primary{background:#1f6feb;border-color:#1f6feb;color:#fff}button.danger{color:#b42318;border-color:#b42318}
input,select,textarea{font:inherit;color:inherit;padding:.4rem .55rem;border:1px solid #8a94a0;border-radius:6px;background:#fff;max-width:100%}
input:focus,select:focus,textarea:focus{outline:2px solid #1f6feb;outline-offset:1px}
.field{display:block;margin:0 0 .8rem}.field>span{display:block;font-weight:600;margin-bottom:.2rem}
.field input{width:100%;max-width:34rem}.field input[type=number]{width:7rem}
.fields{display:flex;flex-wrap:wrap;gap:0 1.2rem}.actions{display:flex;flex-wrap:wrap;gap:.4rem .8rem;align-items:center}
code,.secret{font-family:ui-monospace,monospace;background:#eef1f4;padding:.1rem .35rem;border-radius:4px;word-break:break-all}
.muted{color:#5b6673}.status{font-weight:600}.host{font-weight:600}td.status,td.score,td.pages{white-space:nowrap}
@media (max-width:40rem){header{padding:.6rem 1rem;gap:.3rem 1rem}main{margin:1rem auto;padding:0 .6rem}
.card{padding:.9rem .8rem}th,td{padding:.35rem .3rem}h1{font-size:1.5rem}}
`)

/** The whole document: `script` is a bundled client script (client-script.ts), inlined by nonce. */
export function layout(opts: { title: string; nonce: string; body: Html; nav?: Html; script?: string }): string {
  return html`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${opts.title} · App Audit</title><style nonce="${opts.nonce}">${STYLE}</style></head>
<body><header><strong>App Audit</strong>${opts.nav}</header><main>${opts.body}</main>
${opts.script && html`<script nonce="${opts.nonce}">${raw(opts.script)}</script>`}</body></html>`.toString()
}

export function htmlPage(status: number, title: string, body: Html): Response {
  const nonce = newNonce()
  return new Response(layout({ title, nonce, body }), { status, headers: pageHeaders(nonce) })
}
