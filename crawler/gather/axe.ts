// axe-core's accessibility rules over the loaded page (WCAG 2.1 A/AA and best practice), bounded output.
import AxeBuilder from '@axe-core/playwright'
import axe, { type AxeResults } from 'axe-core'
import type { Page } from 'playwright-core'
import { withDeadline } from '../../shared/async.ts'
import type { AccessibilityArtifact } from '../../shared/checks/types.ts'

const AXE_IMPACTS = new Set(['minor', 'moderate', 'serious', 'critical'])
const TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']

/**
 * One axe.run in the page, for a page without frames: axe evaluated once, its results for violations only
 * (the other kinds keep their counts, with one node each). AxeBuilder evaluates axe's 640 KB twice in
 * legacy mode, and its partial runs finish in a blank page of their own (a new renderer, a third
 * evaluation): 1.5 to 2.3 s against about 0.9 s on a 2-core machine, for the same violations.
 */
async function runInPage(page: Page): Promise<AxeResults> {
  await withDeadline(page.evaluate(axe.source), AXE_DEADLINE_MS, 'evaluating axe')
  const run = page.evaluate((tags) => {
    const a = (window as unknown as { axe: typeof axe }).axe
    a.configure({ branding: { application: 'appaudit' }, allowedOrigins: ['<same_origin>'] })
    return a.run(document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] })
  }, TAGS)
  return withDeadline(run, AXE_DEADLINE_MS, 'axe.run')
}

/** How long each of the two steps may take: a page that keeps its main thread busy gets no axe result. */
const AXE_DEADLINE_MS = 20_000

export async function runAxe(page: Page): Promise<AccessibilityArtifact | null> {
  try {
    // A page with frames keeps AxeBuilder's partial runs, so cross-origin frames are still read.
    const r = page.frames().length > 1 ? await new AxeBuilder({ page: page as never }).withTags(TAGS).analyze() : await runInPage(page)
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
