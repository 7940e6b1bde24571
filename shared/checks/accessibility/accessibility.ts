// axe-core results on the rendered page: rule violations by impact.

import { defineCheck, type AccessibilityViolation } from '../types.ts'

const MAX_LISTED = 10
const MAX_TARGETS = 3
const IMPACT_RANK: Record<string, number> = { critical: 4, serious: 3, moderate: 2, minor: 1 }
const rank = (v: AccessibilityViolation) => IMPACT_RANK[v.impact ?? ''] ?? 0

export const accessibility = defineCheck({
  id: 'accessibility',
  category: 'accessibility',
  title: 'No serious accessibility violations',
  failTitle: 'Serious accessibility violations on the page',
  description: "Runs axe-core's default rules (WCAG 2.x A and AA and best practices) on the rendered page and reports the violations.",
  why:
    'Missing labels, unreadable contrast and keyboard traps lock out screen-reader, keyboard and low-vision users, and expose the site ' +
    'to accessibility claims (ADA, the European Accessibility Act).',
  confirmation:
    'Fails when any violation has impact critical or serious; warns when all violations are moderate or minor; passes with the count ' +
    'of passed rules when there are none. Evidence lists up to 10 violations, worst first: rule id, impact, help text, number of ' +
    "elements, the first element selectors and the rule's documentation URL. Automated rules catch only part of the WCAG criteria " +
    '(about a third to a half of issues): a pass is not a conformance claim, and results marked incomplete (needing review) are ' +
    'counted, not judged. The page is checked as loaded, before any interaction.',
  severity: 'medium',
  fix: {
    generic:
      'Fix the listed rules worst first, following each helpUrl (e.g. add alt text, label form fields, raise contrast to 4.5:1), then ' +
      'run axe in your tests (@axe-core/playwright or jest-axe) so regressions fail the build.',
    vercel:
      "Fix the markup in the app; the Vercel Toolbar's accessibility audit on preview deployments shows the same axe rules while you " +
      'work, and an axe test in CI catches regressions before they deploy.',
    netlify:
      'Fix the markup in the app; add an accessibility audit to deploy previews (the Lighthouse build plugin, ' +
      '@netlify/plugin-lighthouse, runs axe-based audits) so regressions show before publishing.',
    nextjs:
      'Fix the components flagged; eslint-plugin-jsx-a11y (included in eslint-config-next) catches many issues at build time, use ' +
      'next/image with meaningful alt, and add @axe-core/playwright checks to your end-to-end tests.',
    nginx:
      'These are markup issues, not server settings: fix them in the HTML templates or front-end code that nginx serves, then redeploy ' +
      'the files.',
    cloudflare:
      'These are markup issues, not edge settings: fix them in the app or templates (Pages: redeploy). Avoid injected widgets that add ' +
      'unlabeled controls.',
  },
  requires: ['accessibility'],
  run: ({ accessibility: axe }) => {
    const violations = [...axe.violations].sort((a, b) => rank(b) - rank(a) || b.nodes - a.nodes)
    const counts = { critical: 0, serious: 0, moderate: 0, minor: 0, unknown: 0 }
    for (const v of violations) counts[v.impact ?? 'unknown']++
    const evidence = {
      engine: axe.engine,
      violations: violations.length,
      elements: violations.reduce((n, v) => n + v.nodes, 0),
      byImpact: counts,
      passes: axe.passes,
      incomplete: axe.incomplete,
      listed: violations.slice(0, MAX_LISTED).map((v) => ({
        id: v.id,
        impact: v.impact,
        help: v.help,
        nodes: v.nodes,
        targets: v.targets.slice(0, MAX_TARGETS),
        helpUrl: v.helpUrl,
      })),
      // The rest by rule id only, so that an audit can merge every violated rule across its pages.
      ...(violations.length > MAX_LISTED
        ? {
            otherViolations: violations.slice(MAX_LISTED).map((v) => ({
              id: v.id,
              impact: v.impact,
              nodes: v.nodes,
              targets: v.targets.slice(0, 1),
            })),
          }
        : {}),
    }
    const describe = (v: AccessibilityViolation) =>
      `${v.id} (${v.impact ?? 'unknown impact'}, ${v.nodes} element${v.nodes === 1 ? '' : 's'})`
    const severe = counts.critical + counts.serious
    if (severe > 0) {
      return {
        status: 'fail',
        evidence,
        summary: `${severe} critical or serious accessibility violation(s), e.g. ${describe(violations[0]!)}; ${violations.length} rule(s) violated in all.`,
      }
    }
    if (violations.length > 0) {
      return {
        status: 'warn',
        severity: 'low',
        evidence,
        summary: `${violations.length} moderate or minor accessibility violation(s), e.g. ${describe(violations[0]!)}.`,
      }
    }
    return {
      status: 'pass',
      evidence,
      summary: `No axe-core violations; ${axe.passes} rule(s) passed${axe.incomplete > 0 ? `, ${axe.incomplete} need manual review` : ''}.`,
    }
  },
})
