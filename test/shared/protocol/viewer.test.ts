// The live viewer's rules on plain values: what a viewer may ask of the crawl, and how long its link lives.
import { describe, expect, test } from 'bun:test'
import { viewerLinkTtlS } from '../../../shared/jobs/recovery.ts'
import { isViewerRequest, MAX_VIEWER_LANES, parseViewerControl, VIEWER_ENDED_TTL_S } from '../../../shared/protocol/viewer.ts'

describe('viewer control messages', () => {
  test('the crawl reads its own messages and a viewer’s requests; nothing else', () => {
    expect(parseViewerControl('watch')).toEqual({ kind: 'watch' })
    expect(parseViewerControl('focus:3')).toEqual({ kind: 'focus', lane: 3 })
    expect(parseViewerControl('focus:auto')).toEqual({ kind: 'focus', lane: null })
    expect(parseViewerControl('quality:low')).toEqual({ kind: 'quality', quality: 'low' })
    for (const m of ['focus:', `focus:${MAX_VIEWER_LANES}`, 'focus:007', 'focus:-1', 'focus:1 ', 'quality:best', 'WATCH', '', '{}']) {
      expect(parseViewerControl(m)).toBeNull()
    }
  })

  test('a viewer may only choose a lane or lighter frames, never speak for the service', () => {
    for (const m of ['focus:0', 'focus:auto', 'quality:low', 'quality:normal']) expect(isViewerRequest(m)).toBe(true)
    for (const m of ['ended', 'watch', 'unwatch', 'focus:99', 'navigate']) expect(isViewerRequest(m)).toBe(false)
  })
})

describe('viewer link lifetime', () => {
  const config = { RECOVERY_GRACE_S: 60, AUDIT_MAX_DURATION_S: 600, VIEWER_TOKEN_TTL_S: 7_200 }
  test('lives as long as the audit can run: its duration on top of the time recovery keeps it', () => {
    // Recovery gives an unheld audit at least an hour (3 x the longest duration when that is more).
    expect(viewerLinkTtlS(config, 600)).toBe(7_200)
    expect(viewerLinkTtlS({ ...config, AUDIT_MAX_DURATION_S: 7_200 }, 7_200)).toBe(3 * 7_200 + 7_200)
    expect(viewerLinkTtlS({ ...config, VIEWER_TOKEN_TTL_S: 86_400 }, 600)).toBe(86_400)
  })
  test('never outlives the ended mark, so a late link says "ended"', () => {
    expect(viewerLinkTtlS({ ...config, AUDIT_MAX_DURATION_S: 400_000 }, 400_000)).toBeLessThan(VIEWER_ENDED_TTL_S)
  })
})
