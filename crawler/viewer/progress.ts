// What the live viewer shows beside the picture: the crawl's state, pages scanned of discovered, the current
// URL, findings so far by severity, when it started and how many lanes it has. Sent on the viewer's frames
// channel (relayed to every open viewer as it is) and kept in the store, so a viewer that opens shows it at
// once. Small and at most once a second per audit, so it is sent whether or not anyone watches.
import type { Severity } from '../../shared/checks/types.ts'
import type { Infra } from '../../shared/infra/types.ts'
import { SEVERITIES } from '../../shared/report/ranking.ts'
import { VIEWER_LATEST_TTL_S, viewerChannels, viewerKeys } from '../../shared/protocol/viewer.ts'

export type ViewerState = 'waiting' | 'crawling' | 'completed' | 'failed' | 'cancelled'

export interface ViewerProgress {
  type: 'progress'
  state: ViewerState
  pagesScanned: number
  pagesFailed: number
  pagesDiscovered: number
  currentUrl: string | null
  findings: Record<CountedSeverity, number>
  startedAt: string
  lanes: number
  /** The audit's score, 0 to 100, once it has completed. */
  score?: number
}

/** The severities the viewer counts: every one but info. */
const COUNTED = SEVERITIES.filter((s): s is CountedSeverity => s !== 'info')
type CountedSeverity = Exclude<Severity, 'info'>

/** Distinct failing or warning checks, counted by severity (info findings are not counted). */
export function severityCounts(failing: Map<string, string>): ViewerProgress['findings'] {
  const out = { critical: 0, high: 0, medium: 0, low: 0 }
  for (const s of failing.values()) if ((COUNTED as readonly string[]).includes(s)) out[s as CountedSeverity]++
  return out
}

export async function publishViewerProgress(infra: Pick<Infra, 'kv' | 'pubsub'>, auditId: string, p: Omit<ViewerProgress, 'type'>) {
  const message = JSON.stringify({ type: 'progress', ...p } satisfies ViewerProgress)
  await infra.kv.set(viewerKeys.progress(auditId), message, VIEWER_LATEST_TTL_S).catch(() => {})
  await infra.pubsub.publish(viewerChannels.frames(auditId), message).catch(() => {})
}

/** What a completed audit ends with: its score and its final counts. */
export type ViewerFinal = Pick<ViewerProgress, 'pagesScanned' | 'pagesFailed' | 'pagesDiscovered'> & { score: number }

/**
 * The end state, on the last progress seen (so the counts stay) with a completed audit's score and final
 * counts, just before the viewer is ended: the viewer's end card shows them.
 */
export async function publishViewerEnd(
  infra: Pick<Infra, 'kv' | 'pubsub'>,
  auditId: string,
  status: 'completed' | 'failed' | 'cancelled',
  final?: ViewerFinal,
) {
  const last = await infra.kv.get(viewerKeys.progress(auditId)).catch(() => null)
  let p: Omit<ViewerProgress, 'type'> | null = null
  try {
    p = last ? (JSON.parse(last) as ViewerProgress) : null
  } catch {}
  if (!p) return
  await publishViewerProgress(infra, auditId, { ...p, ...final, state: status, currentUrl: null })
}
