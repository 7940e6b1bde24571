// One crawled page of an audit: what the crawl reports, the database stores and the audit result reads.
import type { CheckResult } from './schema.ts'

export interface CrawledPage {
  url: string
  finalUrl: string
  depth: number
  /** null when no response arrived (timeout, crash, blocked, unreachable). */
  httpStatus: number | null
  /** Loaded with a status below 400. */
  ok: boolean
  error?: string
  /** Same-origin page links found in the rendered DOM, normalised, robots rules not yet applied. */
  links: string[]
  /** Page-level check results (crawler/audit/page.ts says which checks those are). */
  checks: CheckResult[]
  loadMs: number
  /**
   * Names of the cookies this page set itself: by Set-Cookie on its own responses, or by its scripts (new
   * in the browser's jar after it loaded). Cookies the jar carried from earlier pages are not in it. Absent
   * when the page was not read, or was stored before pages recorded it.
   */
  cookiesSet?: string[]
}
