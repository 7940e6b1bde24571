// The limits of directory runs, read by the tool's side (service.ts) and by the driver (driver.ts).
export const DIRECTORY_LIMITS = {
  /** Most URLs in one run, by mode: an audit run is capped by the hourly audit starts (AUDIT_STARTS). */
  maxUrls: { scan: 50, audit: 20 },
  /** Items of one run in flight at once, by mode. A scan also counts against the plan's scans in flight. */
  inFlightPerRun: { scan: 3, audit: 2 },
  /** Runs queued or running at once per account. */
  unfinishedPerAccount: 2,
  /** Runs one api process drives at once. */
  drivenPerProcess: 4,
  /** How often a driver looks at its items. */
  tickMs: { scan: 1_000, audit: 3_000 },
  /** The driver's lease on its run; renewed every tick. */
  leaseMs: 30_000,
  /** Worst findings kept per item for the summary table. */
  worstPerItem: 2,
} as const
