// The benchmarks boot the test harness's service; its stop() also drops the run's Redis keys.
export { startService as startBenchService } from '../../test/harness/service.ts'
