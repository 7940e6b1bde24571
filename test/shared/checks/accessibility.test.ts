import { describe, expect, test } from 'bun:test'
import { accessibility } from '../../../shared/checks/accessibility/accessibility.ts'
import type { AccessibilityViolation } from '../../../shared/checks/types.ts'
import { makeArtifacts } from './artifacts.ts'
import { runCheck } from '../../../shared/checks/runner.ts'

const violation = (id: string, impact: AccessibilityViolation['impact'], nodes = 1): AccessibilityViolation => ({
  id,
  impact,
  help: `Help for ${id}`,
  helpUrl: `https://dequeuniversity.com/rules/axe/4.14/${id}`,
  nodes,
  targets: Array.from({ length: nodes }, (_, i) => `#el-${id}-${i}`),
})
const run = (violations: AccessibilityViolation[]) =>
  accessibility.run(makeArtifacts({ accessibility: { engine: 'axe-core 4.14.1', violations, passes: 37, incomplete: 2 } }))
type Listed = { id: string; impact: string; nodes: number; targets: string[]; helpUrl: string; help: string }

describe('accessibility', () => {
  test('passes with the count of passed rules when there are no violations', () => {
    const r = accessibility.run(makeArtifacts())
    expect(r.status).toBe('pass')
    expect(r.summary).toContain('40 rule(s) passed')
    expect(r.evidence.passes).toBe(40)
  })

  test('fails (medium) on a serious or critical violation, worst first', () => {
    const r = run([violation('region', 'moderate', 4), violation('color-contrast', 'serious', 12), violation('button-name', 'critical', 1)])
    expect(r.status).toBe('fail')
    expect(accessibility.severity).toBe('medium')
    const listed = r.evidence.listed as Listed[]
    expect(listed.map((v) => v.id)).toEqual(['button-name', 'color-contrast', 'region'])
    expect(listed[1]).toMatchObject({
      impact: 'serious',
      nodes: 12,
      help: 'Help for color-contrast',
      helpUrl: 'https://dequeuniversity.com/rules/axe/4.14/color-contrast',
    })
    expect(listed[1]!.targets).toEqual(['#el-color-contrast-0', '#el-color-contrast-1', '#el-color-contrast-2'])
    expect(r.evidence.byImpact).toEqual({ critical: 1, serious: 1, moderate: 1, minor: 0, unknown: 0 })
    expect(r.summary).toContain('button-name')
  })

  test('warns when only moderate or minor violations remain', () => {
    const r = run([violation('region', 'moderate', 3), violation('landmark-one-main', 'minor')])
    expect(r.status).toBe('warn')
    expect(r.severity).toBe('low')
  })

  test('lists at most 10 violations', () => {
    const r = run(Array.from({ length: 15 }, (_, i) => violation(`rule-${i}`, 'minor')))
    expect(r.evidence.violations).toBe(15)
    expect(r.evidence.listed as Listed[]).toHaveLength(10)
  })

  test('is skipped when axe could not run', () => {
    expect(runCheck(accessibility, makeArtifacts({ accessibility: null })).status).toBe('skipped')
  })
})
