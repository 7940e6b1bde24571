import { describe, expect, test } from 'bun:test'
import { CHECKS } from '../../../shared/checks/registry.ts'
import type { CheckStatus } from '../../../shared/checks/types.ts'
import { gradeOf, penaltyOf, SCORING, scoreOf } from '../../../shared/report/scoring.ts'

const result = (id: string, status: CheckStatus) => ({ id, status })

describe('scoring table', () => {
  test('every registered check has a row', () => {
    const missing = CHECKS.map((c) => c.id).filter((id) => !(id in SCORING))
    expect(missing).toEqual([])
  })

  test('has no row for a check that is not registered', () => {
    const ids = new Set<string>(CHECKS.map((c) => c.id))
    expect(Object.keys(SCORING).filter((id) => !ids.has(id))).toEqual([])
  })

  test('a warning never costs more than a failure', () => {
    for (const [id, row] of Object.entries(SCORING)) {
      expect({ id, ok: row.warn <= row.fail && row.warn >= 0 }).toEqual({ id, ok: true })
    }
  })

  test('uses Observatory-like magnitudes for the headline findings', () => {
    expect(SCORING.csp!.fail).toBe(25)
    expect(SCORING['cookie-secure']!.fail).toBe(40)
    expect(SCORING['cookie-httponly']!.fail).toBe(30)
    expect(SCORING['x-content-type-options']!.fail).toBe(5)
  })
})

describe('scoreOf', () => {
  test('is 100 with no failures or warnings', () => {
    expect(
      scoreOf([result('csp', 'pass'), result('hsts', 'skipped'), result('js-secrets', 'info'), result('mixed-content', 'error')]),
    ).toBe(100)
  })

  test('subtracts fail and warn penalties', () => {
    expect(scoreOf([result('csp', 'fail'), result('hsts', 'warn')])).toBe(100 - 25 - 10)
  })

  test('never goes below 0', () => {
    expect(scoreOf(CHECKS.map((c) => result(c.id, 'fail')))).toBe(0)
  })

  test('ignores unknown ids', () => {
    expect(penaltyOf(result('retired-check', 'fail'))).toBe(0)
  })
})

describe('gradeOf', () => {
  test('follows the Observatory steps', () => {
    const cases: Array<[number, string]> = [
      [100, 'A+'],
      [99, 'A'],
      [90, 'A'],
      [89, 'A-'],
      [85, 'A-'],
      [84, 'B+'],
      [80, 'B+'],
      [79, 'B'],
      [70, 'B'],
      [69, 'B-'],
      [65, 'B-'],
      [64, 'C+'],
      [60, 'C+'],
      [59, 'C'],
      [50, 'C'],
      [49, 'C-'],
      [45, 'C-'],
      [44, 'D+'],
      [40, 'D+'],
      [39, 'D'],
      [30, 'D'],
      [29, 'D-'],
      [25, 'D-'],
      [24, 'F'],
      [0, 'F'],
    ]
    for (const [score, grade] of cases) expect(`${score}:${gradeOf(score)}`).toBe(`${score}:${grade}`)
  })
})
