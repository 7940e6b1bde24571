// When the live view's ticker takes a still of the focused tab, and whether one that comes back late is shown:
// the rules alone, on times and lanes given by the caller (audit-cast.ts runs them; test/crawler/viewer/
// still-due.test.ts holds them; bench/viewer-fps measures what they do to frames a second).

/** Frames published per second at most, screencast and stills together. */
export const MAX_FPS = 15
/**
 * A still is taken this long after the previous one started (MAX_FPS a second, or as fast as Chromium makes
 * them when each takes longer, STILLS_IN_FLIGHT at most at once)...
 */
const STILL_EVERY_MS = Math.ceil(1000 / MAX_FPS)
/**
 * ...and only when no screencast frame came for this long: a page that repaints is shown by its screencast.
 * A still is a one-frame screencast (capture.ts), cheap beside the live one, so the wait is short: each page
 * a crawl loads sends a screencast frame or two, and waiting 250 ms after each (with 80 ms between stills and
 * two on their way) left a static site's view at 7-8.5 frames a second on a busy machine; 120 ms, MAX_FPS
 * and three on their way gave 10-11 (bench/viewer-fps --busy --quick).
 */
const SCREENCAST_QUIET_MS = 120
/**
 * A page whose screencast streams (STREAM_FRAMES frames in a row of it, each within STREAM_GAP_MS of the one
 * before) is left to the stream until it has paused STREAM_GAP_MS: a still in its gaps is a second capture of
 * the same tab on the same cores (an animated site beside two CPU-bound processes: 8.0 and 8.0 frames a second
 * with them, 9.0 and 10.0 without; docs/operations.md, "On a seventh kind"). A page that does not repaint sends
 * a frame or two as it loads, never three in a row, so its stills are unchanged.
 */
const STREAM_GAP_MS = 300
const STREAM_FRAMES = 3
/** Frames in a row of one page, each within STREAM_GAP_MS of the one before, with one more of `url` at `now`. */
export function framesInRow(last: { url: string; at: number; frames: number }, url: string, now: number): number {
  return url === last.url && last.at > 0 && now - last.at < STREAM_GAP_MS ? last.frames + 1 : 1
}
/** Whether the ticker takes a still now (times are performance.now() readings; `lastScreencast` 0: none yet). */
export function stillDue(now: number, at: { lastStill: number; lastScreencast: number; streamFrames: number }): boolean {
  if (now - at.lastStill < STILL_EVERY_MS) return false
  const streaming = at.lastScreencast > 0 && at.streamFrames >= STREAM_FRAMES
  return now - at.lastScreencast >= (streaming ? STREAM_GAP_MS : SCREENCAST_QUIET_MS)
}

/**
 * Whether the ticker's still of lane `lane` is shown once it is back: while its tab has the view (`focused`),
 * or when the view has moved to another lane that has shown nothing yet (`shownLane`, the lane of the last
 * frame published, is still this one), so the picture goes on until the new lane has one.
 */
export function tickerStillWanted(focused: boolean, lane: number, shownLane: number): boolean {
  return focused || lane === shownLane
}
