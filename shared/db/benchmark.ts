// The public benchmark: the mean score of every completed scan of every account, and how many there are.
import type { Sql } from './index.ts'

export interface Benchmark {
  /** Mean score rounded to one decimal; null when no scan has completed yet. */
  avg: number | null
  count: number
}

/**
 * One aggregate over the rows themselves, never a counter kept beside them: a scan completing while this
 * runs is either in both numbers or in neither, and no concurrent writer can make them drift.
 * PostgreSQL rounds the numeric mean half away from zero (72.25 -> 72.3).
 */
export async function scoreBenchmark(sql: Sql): Promise<Benchmark> {
  const [row] = await sql<{ avg: string | null; count: number }[]>`
    SELECT round(avg(score)::numeric, 1)::text AS avg, count(score)::int AS count
    FROM scans WHERE status = 'completed' AND score IS NOT NULL`
  return { avg: row?.avg == null ? null : Number(row.avg), count: row?.count ?? 0 }
}
