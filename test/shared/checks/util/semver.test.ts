// What the advisory table's version matcher does, pinned at the cases it must keep: npm's precedence,
// partial versions, and pre-releases that fall inside a plain range (where npm's own matcher, and
// Bun.semver.satisfies, would leave them out).
import { describe, expect, test } from 'bun:test'
import { compareVersions, parseRange, parseVersion, satisfies } from '../../../../shared/checks/util/semver.ts'

const order = (a: string, b: string) => compareVersions(parseVersion(a)!, parseVersion(b)!)

describe('semver for the advisory table', () => {
  test('reads partial, v-prefixed and build-tagged versions; refuses what is not a version', () => {
    expect(parseVersion('2.0')).toEqual({ major: 2, minor: 0, patch: 0, prerelease: [] })
    expect(parseVersion('7')).toEqual({ major: 7, minor: 0, patch: 0, prerelease: [] })
    expect(parseVersion(' v1.13.0-rc.1+build.5 ')).toEqual({ major: 1, minor: 13, patch: 0, prerelease: ['rc', '1'] })
    for (const bad of ['', 'x', '1.2.3.4', '1..2', '1.2.3-', 'latest', '01.2.3x']) expect(parseVersion(bad)).toBeNull()
  })

  test('orders by precedence: core numbers, then a pre-release before its release, identifiers numeric before alphanumeric', () => {
    expect(order('1.2.3', '1.2.10')).toBe(-1)
    expect(order('1.10.0', '1.9.9')).toBe(1)
    expect(order('2.0', '2.0.0')).toBe(0)
    expect(order('1.0.0-alpha', '1.0.0')).toBe(-1)
    expect(order('1.0.0-alpha', '1.0.0-alpha.1')).toBe(-1)
    expect(order('1.0.0-alpha.1', '1.0.0-alpha.beta')).toBe(-1)
    expect(order('1.0.0-beta.2', '1.0.0-beta.11')).toBe(-1)
    expect(order('1.0.0-rc.1', '1.0.0-beta.11')).toBe(1)
    expect(order('1.0.0+a', '1.0.0+b')).toBe(0)
  })

  test('a pre-release of a vulnerable release is inside a plain range', () => {
    expect(satisfies('3.5.0-rc.1', '<3.5.0')).toBe(true)
    expect(satisfies('3.5.1-beta', '>=3.5.0')).toBe(true)
    expect(satisfies('4.0.0-beta', '>=3.0.0 <4.0.0')).toBe(true)
  })

  test('partial versions and operators with spaces match', () => {
    expect(satisfies('2.0', '<2.0.1')).toBe(true)
    expect(satisfies('1.2', '=1.2.0')).toBe(true)
    expect(satisfies('1.2.0', '1.2.0')).toBe(true)
    expect(satisfies('1.12.4', '< 1.12.5')).toBe(true)
    expect(satisfies('v1.13.0-2', '>=1.13.0')).toBe(false)
    expect(satisfies('1.12.5', '<=1.12.5')).toBe(true)
    expect(satisfies('1.12.6', '>1.12.5 <1.12.6')).toBe(false)
  })

  test('a range it does not understand is an error, so a typo in the table fails loudly', () => {
    for (const bad of ['', '^1.2.0', '~1.2.0', '1.x', '>=1.2.0 ||', 'between 1 and 2']) expect(() => parseRange(bad)).toThrow()
  })
})
