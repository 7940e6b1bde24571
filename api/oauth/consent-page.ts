// The consent screen: names the client and where it will send the user, and asks the signed-in person
// to allow or deny. The form carries only the pending request's id and the session's anti-CSRF token.
import { html } from '../../shared/lib/html.ts'
import { layout, newNonce, pageHeaders } from '../http/layout.ts'
import type { AuthorizeRequest } from './model.ts'
import { redirectDisplay } from './redirect-uris.ts'

export function consentPage(opts: { request: AuthorizeRequest; requestId: string; csrfToken: string; userLabel: string }): Response {
  const nonce = newNonce()
  const { request } = opts
  const body = html`<div class="card" id="consent">
<h1>Allow <span id="client-name">${request.clientName}</span> to use App Audit?</h1>
<p><strong>${request.clientName}</strong> is asking to act for your account through the MCP API: it can run scans and
audits, read your reports and spend your account's allowance and credits.</p>
<p>After you decide, you will be sent to <span class="host" id="redirect-host">${redirectDisplay(request.redirectUri)}</span>.
Only allow this if you started the connection from that application just now.</p>
<p class="muted">Signed in as ${opts.userLabel}. The access lasts 90 days; you can revoke it at any time in
Settings, under Agents and MCP.</p>
<form method="post" action="/oauth/authorize">
<input type="hidden" name="request_id" value="${opts.requestId}">
<input type="hidden" name="csrf" value="${opts.csrfToken}">
<button class="primary" type="submit" name="decision" value="approve" id="approve">Allow</button>
<button type="submit" name="decision" value="deny" id="deny">Deny</button>
</form></div>`
  return new Response(layout({ title: `Allow ${request.clientName}`, nonce, body }), { status: 200, headers: pageHeaders(nonce) })
}
