// The replay of an audit: one small still of each page as it is judged, stored within the replay's caps
// (counted on from what an earlier holder stored). The live view never gets these small stills (a page's
// text cannot be read at 480 pixels): a judged page that never showed live gets a still of its own at the
// live size, and only while someone watches (audit-cast.ts showJudged).
import type { Page } from 'playwright-core'
import type { Sql } from '../../shared/db/index.ts'
import { REPLAY_LIMITS, replayUsage, storeAuditFrame } from '../../shared/db/audit-frames.ts'
import { errorMessage } from '../../shared/errors.ts'
import { liveAuditCast, type ScreencastDeps } from './audit-cast.ts'
import { captureJpeg } from './capture.ts'

/** The replay's frame of a judged page: a small JPEG of its viewport (about 480 pixels wide). */
export const REPLAY_FRAME = { scale: 0.375, quality: 50 } as const

/** The replay's still of a page that was just judged: the JPEG's bytes, or null. */
export async function captureReplayFrame(page: Page): Promise<Buffer | null> {
  const data = await captureJpeg(page, REPLAY_FRAME.scale, REPLAY_FRAME.quality)
  return data ? Buffer.from(data, 'base64') : null
}

/** Frame inserts waiting at once; beyond this a lane waits for the oldest before going on. */
const MAX_PENDING_WRITES = 8

/**
 * One audit's replay: a still of each judged page while the caps allow. The still is taken while the lane's
 * tab still shows the page; its insert goes on off the lane's path (a few at most at once), and flush()
 * waits for them before the audit ends.
 */
export class ReplayRecorder {
  private readonly writes = new Set<Promise<void>>()

  private constructor(
    private readonly sql: Sql,
    private readonly deps: ScreencastDeps,
    private readonly usage: Awaited<ReturnType<typeof replayUsage>>,
  ) {}

  /** The recorder of an audit, counting on from the frames an earlier holder stored. */
  static async open(sql: Sql, deps: ScreencastDeps): Promise<ReplayRecorder> {
    return new ReplayRecorder(sql, deps, await replayUsage(sql, deps.auditId))
  }

  /**
   * The still of lane `lane`'s tab, started now (before the page is stored, so both go on at once); null
   * when the caps are already reached. Hand it to record() once the page is stored.
   */
  capture(tab: Page): Promise<Buffer | null> | null {
    const replay = this.usage
    if (replay.frames >= REPLAY_LIMITS.maxFrames || replay.bytes >= REPLAY_LIMITS.maxBytes) return null
    const shot = captureReplayFrame(tab)
    shot.catch(() => {})
    return shot
  }

  /**
   * Lane `lane`'s tab shows the judged page `url`: its still (from capture(), or taken now) is stored, within
   * the caps, and the live view shows the page if it never did.
   */
  async record(tab: Page, lane: number, url: string, still: Promise<Buffer | null> | null = this.capture(tab)): Promise<void> {
    await this.store(url, still)
    await liveAuditCast(this.deps)?.showJudged(tab, lane, url)
  }

  /** Resolves when every frame insert begun has ended. */
  async flush(): Promise<void> {
    for (let i = 0; i < 10_000 && this.writes.size; i++) await Promise.allSettled([...this.writes])
  }

  private async store(url: string, still: Promise<Buffer | null> | null): Promise<void> {
    const replay = this.usage
    const jpeg = still ? await still : null
    if (!jpeg || replay.frames >= REPLAY_LIMITS.maxFrames || replay.bytes + jpeg.byteLength > REPLAY_LIMITS.maxBytes) return
    const seq = replay.nextSeq++
    replay.frames++
    replay.bytes += jpeg.byteLength
    if (this.writes.size >= MAX_PENDING_WRITES) await Promise.race(this.writes)
    const write: Promise<void> = storeAuditFrame(this.sql, this.deps.auditId, seq, url, jpeg)
      .catch((e) => this.deps.log.warn('replay frame not stored', { error: errorMessage(e) }))
      .finally(() => this.writes.delete(write))
    this.writes.add(write)
  }
}
