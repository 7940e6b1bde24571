// Where the command writes a report: only where the user said, or a bare safe name the service suggested.
import { describe, expect, test } from 'bun:test'
import { safeFileName } from '../../cli/reports.ts'

describe('safeFileName', () => {
  test.each([
    ['appaudit-scn_abc.sarif', 'appaudit-scn_abc.sarif'],
    ['../../.git/hooks/pre-commit', 'pre-commit'],
    ['/etc/passwd', 'passwd'],
    ['.bashrc', 'fallback.sarif'],
    ['a b;rm -rf', 'fallback.sarif'],
    ['', 'fallback.sarif'],
    [undefined, 'fallback.sarif'],
  ])('%j -> %s', (suggested, expected) => {
    expect(safeFileName(suggested, 'fallback.sarif')).toBe(expected)
  })
})
