// axe-core's accessibility rules over the loaded page (WCAG 2.1 A/AA and best practice), bounded output.
import AxeBuilder from '@axe-core/playwright'
import type { Page } from 'playwright-core'
import type { AccessibilityArtifact } from '../../shared/checks/types.ts'

const AXE_IMPACTS = new Set(['minor', 'moderate', 'serious', 'critical'])

export async function runAxe(page: Page): Promise<AccessibilityArtifact | null> {
  try {
    // AxeBuilder's default runs axe in pieces (runPartial in every frame) and joins them (finishRun) in a
    // blank page of its own: a new renderer and axe's 640 KB evaluated a second time, 1.3 s of a 2.3 s run
    // on a 2-core machine. A page without frames gets the same result from one axe.run in the page
    // (legacy mode); a page with frames keeps the partial runs, so cross-origin frames are still read.
    const framed = page.frames().length > 1
    const r = await new AxeBuilder({ page: page as never })
      .withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'])
      .setLegacyMode(!framed)
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
