// Navigation and resource timings, read inside the page.
import type { PerformanceArtifact } from '../../shared/checks/types.ts'

/** Runs in the page: navigation and resource timings (bounded). */
export function readTimings(): PerformanceArtifact {
  const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming | undefined
  const round = (n: number) => Math.round(n)
  return {
    navigation: nav
      ? {
          ttfb: round(nav.responseStart),
          domContentLoaded: round(nav.domContentLoadedEventEnd),
          load: round(nav.loadEventEnd),
          transferSize: nav.transferSize,
          encodedBodySize: nav.encodedBodySize,
          decodedBodySize: nav.decodedBodySize,
        }
      : null,
    resources: (performance.getEntriesByType('resource') as PerformanceResourceTiming[]).slice(0, 300).map((r) => ({
      url: r.name,
      initiatorType: r.initiatorType,
      transferSize: r.transferSize,
      encodedBodySize: r.encodedBodySize,
      decodedBodySize: r.decodedBodySize,
      duration: round(r.duration),
    })),
  }
}
