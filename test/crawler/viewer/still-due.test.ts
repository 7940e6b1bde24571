// When the live view's ticker takes a still of the focused tab (crawler/viewer/still-rules.ts stillDue, and
// framesInRow, which counts a stream), and whether one back late is shown (tickerStillWanted): the rules
// alone, on times and lanes given by hand. bench/viewer-fps measures what they do to frames a second.
import { expect, test } from 'bun:test'
import { framesInRow, MAX_FPS, stillDue, tickerStillWanted } from '../../../crawler/viewer/still-rules.ts'

const EVERY = Math.ceil(1000 / MAX_FPS)

test('a tab that has sent no screencast frame gets a still every 1/MAX_FPS s', () => {
  const none = { lastScreencast: 0, streamFrames: 0 }
  expect(stillDue(10_000, { lastStill: 0, ...none })).toBe(true)
  expect(stillDue(10_000, { lastStill: 10_000 - EVERY + 1, ...none })).toBe(false)
  expect(stillDue(10_000, { lastStill: 10_000 - EVERY, ...none })).toBe(true)
})

test('after a page that painted as it loaded (one or two frames) a still comes 120 ms after its last frame', () => {
  for (const streamFrames of [1, 2]) {
    const loaded = { lastStill: 0, lastScreencast: 10_000, streamFrames }
    expect(stillDue(10_119, loaded)).toBe(false)
    expect(stillDue(10_120, loaded)).toBe(true)
  }
})

test('a page whose screencast streams (three frames in a row) is left to it until the stream has paused 300 ms', () => {
  const streaming = { lastStill: 0, lastScreencast: 10_000, streamFrames: 3 }
  expect(stillDue(10_120, streaming)).toBe(false)
  expect(stillDue(10_299, streaming)).toBe(false)
  expect(stillDue(10_300, streaming)).toBe(true)
  expect(stillDue(10_120, { ...streaming, streamFrames: 40 })).toBe(false)
  // The rate of stills holds whatever the screencast does.
  expect(stillDue(10_400, { ...streaming, lastStill: 10_400 - EVERY + 1 })).toBe(false)
})

test('frames in a row count only frames of one page, each within 300 ms of the one before', () => {
  // An animated page: frames 100-250 ms apart make a stream.
  let last = { url: '', at: 0, frames: 0 }
  for (const at of [1_000, 1_100, 1_350, 1_599]) last = { url: '/a', at, frames: framesInRow(last, '/a', at) }
  expect(last.frames).toBe(4)
  // A pause of 300 ms ends it.
  expect(framesInRow(last, '/a', 1_899)).toBe(1)
  // So does another page, however soon (a crawl moving on: each page paints once or twice as it loads).
  expect(framesInRow(last, '/b', 1_650)).toBe(1)
  // The first frame after a refocus (no frame yet: at 0) starts a count.
  expect(framesInRow({ url: '/a', at: 0, frames: 9 }, '/a', 50)).toBe(1)
})

test("a ticker's still is shown while its lane has the view, and after a move until the new lane has shown a frame", () => {
  // Lane 0 has the view: its stills are shown.
  expect(tickerStillWanted(true, 0, 0)).toBe(true)
  expect(tickerStillWanted(true, 0, -1)).toBe(true)
  // The view moved to lane 1, which has shown nothing yet: lane 0's stills on their way still show.
  expect(tickerStillWanted(false, 0, 0)).toBe(true)
  // Once lane 1 has shown a frame, lane 0's late stills never take the view back.
  expect(tickerStillWanted(false, 0, 1)).toBe(false)
  // A lane that never showed anything and has lost the view: not shown.
  expect(tickerStillWanted(false, 2, -1)).toBe(false)
})
