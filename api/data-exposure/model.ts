// The answer of check_data_exposure and the limits that bound the work behind it: plain types, shared by the
// page load (page-load.ts), the data requests (data-requests.ts) and the service that puts them together.
import type { BundleFindings, SupabaseKeyKind } from './bundle.ts'

export const EXPOSURE_LIMITS = {
  scripts: 20,
  scriptBytes: 2 * 1024 * 1024,
  pageBytes: 2 * 1024 * 1024,
  sampleRows: 3,
  sampleBytes: 256 * 1024,
  concurrency: 4,
  /** Data requests stop being started after this long; what is left is reported as not checked. */
  probeBudgetMs: 45_000,
}

export type TableStatus = 'exposed' | 'empty_or_rls' | 'denied' | 'not_found' | 'not_checked' | 'blocked' | 'unreachable' | 'error'

export interface TableResult {
  name: string
  /** true: anonymous reads return rows. false: refused. null: unknown (RLS or empty, or not checked). */
  readable: boolean | null
  status: TableStatus
  /** Rows an anonymous caller can read (Content-Range of a count=exact request); null when unknown. */
  rowCount: number | null
  /** Up to 3 rows, redacted: keys kept, values masked. */
  sample: unknown[] | null
  httpStatus: number | null
  detail: string
}

export type FirebaseStatus = 'open' | 'open_empty' | 'denied' | 'not_found' | 'not_checked' | 'blocked' | 'unreachable' | 'error'

export interface ExposureResult {
  url: string
  /** The page the HTML came from after redirects; its origin is the app that must be verified. */
  finalUrl: string
  origin: string
  verified: boolean
  /** Whether data requests beyond the page load were made (attempted: the egress guard may still refuse them). */
  probed: boolean
  supabase: {
    projectUrl: string
    keyKind: SupabaseKeyKind | null
    tables: TableResult[]
    otherProjectUrls: string[]
  } | null
  firebase: {
    databaseURL: string | null
    projectId: string | null
    readable: boolean | null
    status: FirebaseStatus
    /** Top-level keys of an open database (names only, no values), at most 20. */
    topLevelKeys: string[] | null
    httpStatus: number | null
    detail: string
  } | null
  /** Readable data found: table names and "firebase:/" for an open database. */
  exposed: string[]
  leakedSecrets: BundleFindings['leakedSecrets']
  loaded: { page: string; scripts: string[]; skippedCrossOriginScripts: number; truncatedScripts: number }
  notes: string[]
  nextStep?: { tool: 'verify_site'; arguments: { url: string }; why: string }
}
