// axe-core's accessibility rules over the loaded page (WCAG 2.1 A/AA and best practice), bounded output.
import AxeBuilder from '@axe-core/playwright'
import type { Page } from 'playwright-core'
import type { AccessibilityArtifact } from '../../shared/checks/types.ts'

const AXE_IMPACTS = new Set(['minor', 'moderate', 'serious', 'critical'])

export async function runAxe(page: Page): Promise<AccessibilityArtifact | null> {
  try {
    const r = await new AxeBuilder({ page: page as never })
      .withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'])
      .analyze()
    return {
      engine: `${r.testEngine.name} ${r.testEngine.version}`,
      violations: r.violations.slice(0, 50).map((v) => ({
        id: v.id,
        impact: AXE_IMPACTS.has(v.impact ?? '') ? (v.impact as 'minor') : null,
        help: v.help,
        helpUrl: v.helpUrl,
        nodes: v.nodes.length,
        targets: v.nodes.slice(0, 5).map((n) => n.target.join(' ')),
      })),
      passes: r.passes.length,
      incomplete: r.incomplete.length,
    }
  } catch {
    return null
  }
}
