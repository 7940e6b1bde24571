// What the command prints: a redrawn line on a terminal, plain lines in CI.
import { describe, expect, test } from 'bun:test'
import { bar, createProgress, type Mode, modeOf, summaryText } from '../../cli/output.ts'

function sink(isTTY: boolean, columns = 80) {
  const chunks: string[] = []
  return { chunks, text: () => chunks.join(''), stream: { isTTY, columns, write: (s: string) => chunks.push(s) } }
}

describe('the output mode', () => {
  test.each([
    [{}, true, 'terminal'],
    [{}, false, 'ci'],
    [{ CI: 'true' }, true, 'ci'],
    [{ CI: '1' }, true, 'ci'],
    [{ CI: 'false' }, true, 'terminal'],
  ])('env %p with a terminal %p is %s', (env, isTTY, mode) => {
    expect(modeOf(env, { isTTY, write: () => {} })).toBe(mode as Mode)
  })
})

describe('progress', () => {
  test('in CI is one plain line per change, with the seconds elapsed and no escape codes', () => {
    const out = sink(false)
    let t = 0
    const p = createProgress(out.stream, 'ci', () => t)
    p.update('scan 10%')
    p.update('scan 10%')
    t = 2_000
    p.update('scan 50%')
    p.note('live view: http://x/viewer/aud_1#k')
    p.end()
    expect(out.text()).toBe('[0s] scan 10%\n[2s] scan 50%\n[2s] live view: http://x/viewer/aud_1#k\n')
  })

  test('on a terminal is one line redrawn in place, cut to the width, and put back under a note', () => {
    const out = sink(true, 30)
    const p = createProgress(out.stream, 'terminal', () => 0)
    p.update('a'.repeat(50))
    p.note('a note')
    p.end()
    const text = out.text()
    expect(text).toContain('\r\x1b[2K')
    expect(out.chunks[0]!.length).toBeLessThanOrEqual(29)
    expect(text).toContain('a note\n')
    expect(text.endsWith('\r\x1b[2K')).toBe(true)
  })

  test('bars stay within bounds', () => {
    expect(bar(0.5, 10)).toBe('[#####-----]  50%')
    expect(bar(7, 4)).toBe('[####] 100%')
    expect(bar(Number.NaN, 4)).toBe('[----]   0%')
  })
})

describe('the summary', () => {
  test('names each failed threshold and ends with the result and its exit code, uncoloured for CI', () => {
    const text = summaryText(
      {
        exitCode: 1,
        command: 'scan',
        id: 'scn_1',
        url: 'https://app.example.com/',
        score: 40,
        grade: 'D',
        findings: [],
        verdict: { passed: false, failures: ['score 40 is below --min-score 50'], counted: [] },
      },
      false,
    )
    expect(text).toBe(
      'scan scn_1 of https://app.example.com/: score 40 (D), no findings\nFAIL score 40 is below --min-score 50\nresult: threshold failed (exit 1)\n',
    )
    expect(text).not.toContain('\x1b')
  })
})
