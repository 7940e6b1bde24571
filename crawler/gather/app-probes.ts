// Probes of known web applications (shared/checks/probe-paths-apps.ts): the WordPress group when the main
// response shows WordPress, and a few paths under the scanned URL's base path when it is not "/". Planned from
// the plain-HTTP main response, so they go out with the other probes, before the page has loaded; plain GETs
// through the scan's egress proxy, no redirect followed (a redirect's Location is kept). A scan of a site
// that is neither pays nothing.
import { APP_PROBE_BUDGET, type AppProbePlan, appProbePaths, planAppProbes } from '../../shared/checks/probe-paths-apps.ts'
import { PROBE_PATHS } from '../../shared/checks/probe-paths.ts'

export interface AppProbes {
  plan: AppProbePlan
  /** The paths to probe, each once, none of PROBE_PATHS. */
  paths: string[]
}

/** What to probe for the known applications of this scan, from its final URL and main response. */
export function appProbesFor(finalUrl: string, main: { body: string; headers?: Record<string, string> }): AppProbes {
  const plan = planAppProbes(finalUrl, main)
  return { plan, paths: appProbePaths(plan, PROBE_PATHS).slice(0, APP_PROBE_BUDGET) }
}

/** How many application probes were sent, of each group, against APP_PROBE_BUDGET: what the report states. */
export function appProbeCounts(apps: AppProbes) {
  const wordpress = new Set(Object.values(apps.plan.wordpress?.paths ?? {}))
  const sentWordpress = apps.paths.filter((p) => wordpress.has(p)).length
  return {
    budget: APP_PROBE_BUDGET,
    sent: apps.paths.length,
    wordpress: sentWordpress,
    basePath: apps.paths.length - sentWordpress,
  }
}
