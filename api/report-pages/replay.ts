// The crawl's replay on an audit's report page: the still the crawler kept of each page it judged
// (shared/db/audit-frames.ts), played back as a timeline a person can scrub. The page embeds the index (when,
// which URL) and loads each frame from its own route: the owner's (/dashboard/audits/{id}/replay/{seq}) or,
// for a shared report, the public one (/r/{slug}/replay/{seq}). Script and style carry the page's nonce, so
// the page's CSP (scripts and styles by nonce only, images from 'self') holds. The player's script is
// replay-client.ts, bundled when this module loads.
import { listAuditFrames, readAuditFrame } from '../../shared/db/audit-frames.ts'
import type { Sql } from '../../shared/db/index.ts'
import { type Html, html, raw } from '../../shared/lib/html.ts'
import type { Logger } from '../../shared/lib/log.ts'
import { errorMessage } from '../../shared/errors.ts'
import { bundleClientScript } from '../http/client-script.ts'

/** JSON inside <script type="application/json">: "<" escaped, so no "</script>" can end it early. */
const jsonInScript = (v: unknown) => raw(JSON.stringify(v).replace(/</g, '\\u003c'))

const STYLE = raw(`
.replay-player{display:grid;gap:.5rem}
.replay-player img{width:100%;max-width:960px;height:auto;background:#000;border-radius:4px}
.replay-controls{display:flex;gap:.6rem;align-items:center;flex-wrap:wrap}
.replay-controls input[type=range]{flex:1 1 16rem}
.replay-meta{font-size:.9em;color:#555;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
`)

const SCRIPT = raw(await bundleClientScript(new URL('./replay-client.ts', import.meta.url)))

/** The replay player for an audit whose frames are served under `frameBase`, or null when it kept none. */
export async function replayHtml(sql: Sql, log: Logger, auditId: string, frameBase: string, nonce: string): Promise<Html | null> {
  try {
    const frames = await listAuditFrames(sql, auditId)
    if (frames.length === 0) return null
    const index = frames.map((f) => ({ seq: f.seq, at: f.at.toISOString(), url: f.url }))
    return html`<style nonce="${nonce}">${STYLE}</style>
<div class="replay-player" id="replay-player" data-base="${frameBase}">
<img id="replay-img" width="480" height="300" alt="The crawler's browser">
<div class="replay-controls"><button type="button" id="replay-play">Play</button>
<input type="range" id="replay-seek" min="0" max="${frames.length - 1}" value="0" aria-label="Position in the crawl">
<span id="replay-at"></span></div>
<div class="replay-meta" id="replay-url"></div>
<p class="muted">One still of each page as the crawler judged it, ${frames.length} in all.</p>
</div>
<script type="application/json" id="replay-index" nonce="${nonce}">${jsonInScript(index)}</script>
<script nonce="${nonce}">${SCRIPT}</script>`
  } catch (e) {
    log.warn('replay could not be shown', { auditId, error: errorMessage(e) })
    return null
  }
}

/** One frame as an image response (of the owner's audit when `ownerAccountId` is given); 404 for any frame not there. */
export async function frameResponse(sql: Sql, auditId: string, rawSeq: string, ownerAccountId?: string): Promise<Response> {
  const seq = Number(rawSeq)
  const notFound = () =>
    new Response('Not found\n', { status: 404, headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' } })
  if (!/^\d{1,6}$/.test(rawSeq) || !Number.isSafeInteger(seq)) return notFound()
  const jpeg = await readAuditFrame(sql, auditId, seq, ownerAccountId)
  if (!jpeg) return notFound()
  return new Response(new Uint8Array(jpeg), {
    headers: {
      'content-type': 'image/jpeg',
      // A frame never changes; private, since it is the owner's (or a shared report's, until it is withdrawn).
      'cache-control': 'private, max-age=3600',
      'x-content-type-options': 'nosniff',
      'content-security-policy': "default-src 'none'",
      'cross-origin-resource-policy': 'same-origin',
    },
  })
}
