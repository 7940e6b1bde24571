// The crawl's replay on an audit's report page. The player and its frames come from api/viewer/replay.ts
// (loadReplay, replayPlayerHtml), loaded when that module is present: until it is, audits show no replay.
// The player is a self-contained fragment with inline script and style; each gets the page's nonce, so
// the page's CSP (scripts and styles by nonce only) still holds.
import type { Services } from '../services.ts'

interface ReplayModule {
  loadReplay(services: Services, auditId: string): Promise<unknown>
  replayPlayerHtml(frames: never): string
}

let loaded: Promise<ReplayModule | null> | null = null

function replayModule(): Promise<ReplayModule | null> {
  loaded ??= import(new URL('../viewer/replay.ts', import.meta.url).href)
    .then((m) => (typeof m?.loadReplay === 'function' && typeof m?.replayPlayerHtml === 'function' ? (m as ReplayModule) : null))
    .catch(() => null)
  return loaded
}

/** Gives every <script> and <style> of a fragment the page's nonce (one that names its own keeps it). */
export const withNonce = (html: string, nonce: string) => html.replace(/<(script|style)\b(?![^>]*\bnonce=)/gi, `<$1 nonce="${nonce}"`)

/** The replay player for an audit, or null when there is none (no player yet, no frames kept, or an error). */
export async function replayHtml(services: Services, auditId: string, nonce: string): Promise<string | null> {
  const m = await replayModule()
  if (!m) return null
  try {
    const frames = await m.loadReplay(services, auditId)
    if (!frames || (Array.isArray(frames) && frames.length === 0)) return null
    return withNonce(m.replayPlayerHtml(frames as never), nonce)
  } catch (e) {
    services.log.warn('replay could not be shown', { auditId, error: (e as Error).message })
    return null
  }
}
