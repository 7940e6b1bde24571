// The benchmarks boot the test harness's service; its stop() also drops the run's Redis keys.
export { startService as startBenchService } from '../../test/harness/service.ts'

/**
 * Settings of the service a bench boots that may be given in the bench's environment (the harness builds its
 * config from defaults, not from the environment), so one build can be measured either way:
 * `CRAWL_SHARED_RENDERER=true bun bench/viewer-fps.ts`.
 */
export const BENCH_ENV_SETTINGS = ['CRAWL_SHARED_RENDERER'] as const

/** The BENCH_ENV_SETTINGS this process's environment sets. */
export function settingsFromEnv(): Record<string, string> {
  const out: Record<string, string> = {}
  for (const name of BENCH_ENV_SETTINGS) {
    const value = process.env[name]
    if (value !== undefined) out[name] = value
  }
  return out
}
