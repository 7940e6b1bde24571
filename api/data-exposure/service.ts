// check_data_exposure on plain values. Two stages:
// 1. What an anonymous visitor's page load already gets: the page's HTML and its same-origin JavaScript,
//    fetched over plain HTTP through the egress guard (no browser), searched for Supabase and Firebase
//    configuration. Always done.
// 2. Reading data beyond that page load: anonymous, read-only requests (GET/HEAD) to the Supabase REST API
//    and the Firebase Realtime Database with the app's own public key. Done only when this account has
//    verified the app (verify_site) at the origin the page finally loaded from. Rows that come back are
//    redacted before they reach the result.
// Without verification the tool still answers, with stage 1's findings and every table "not_checked":
// what the bundle reveals is useful on its own, and the answer says how to unlock stage 2.
import type { Config } from '../../shared/config.ts'
import type { Principal } from '../../shared/db/accounts.ts'
import type { Sql } from '../../shared/db/index.ts'
import { isVerified } from '../../shared/db/verifications.ts'
import { EgressHttp } from '../../shared/egress/http.ts'
import { mapLimit } from '../../shared/lib/async.ts'
import { checkTarget } from '../http/target.ts'
import { type BundleFindings, findInBundle } from './bundle.ts'
import { notChecked, probeFirebase, probeTable } from './data-requests.ts'
import { EXPOSURE_LIMITS, type ExposureResult, type TableResult } from './model.ts'
import { loadBundle } from './page-load.ts'

export interface ExposureDeps {
  sql: Sql
  config: Pick<Config, 'ALLOW_PRIVATE_TARGETS' | 'trustedTargetHosts' | 'PROBE_TIMEOUT_MS'>
  signal?: AbortSignal
  progress?: (progress: number, total: number, message: string) => Promise<void>
}

const SECRET_ADVICE: Record<BundleFindings['leakedSecrets'][number]['kind'], string> = {
  supabase_service_role_jwt:
    'A Supabase service_role key is in the JavaScript: it bypasses row level security for anyone. Rotate it now and keep it on the ' +
    'server.',
  supabase_secret_key:
    'A Supabase secret key (sb_secret_) is in the JavaScript: it bypasses row level security for anyone. Rotate it now and keep it on ' +
    'the server.',
}

type Bundle = Awaited<ReturnType<typeof loadBundle>>
type Progress = (n: number, message: string) => Promise<void> | undefined

export async function checkDataExposure(deps: ExposureDeps, accountId: string, rawUrl: string): Promise<ExposureResult> {
  const url = await checkTarget(deps.config, rawUrl, { refuseUnreachable: true })
  const progress: Progress = (n, message) => deps.progress?.(n, 100, message).catch(() => {})
  const http = await EgressHttp.open(deps.config, deps.signal)
  try {
    await progress(5, 'loading the page')
    const bundle = await loadBundle(http, url)
    const found = findInBundle(bundle.sources)
    const verified = await isVerified(deps.sql, accountId, bundle.origin)
    const notes = [...bundle.notes, ...notesOnFindings(url, bundle.origin, found)]
    await progress(40, 'searched the page and its scripts')
    const allowed = allowedRequests(found, verified)
    const tables = await supabaseTables(http, found.supabase, allowed.supabase, { verified, origin: bundle.origin }, deps.signal, progress)
    const firebase = await firebaseDatabase(http, found.firebase, allowed.firebase, bundle.origin)
    const result = resultOf(url, bundle, found, { verified, probed: allowed.supabase || allowed.firebase, tables, firebase, notes })
    if (!verified && ((found.supabase?.key && tables.length > 0) || found.firebase?.databaseURL)) askToVerify(result)
    await progress(100, 'done')
    return result
  } finally {
    await http.close()
  }
}

/** Which data requests may be made: only for a verified app, and only with what each needs. */
function allowedRequests(found: BundleFindings, verified: boolean): { supabase: boolean; firebase: boolean } {
  const sb = found.supabase
  return {
    supabase: verified && sb !== null && sb.key !== null && sb.tables.length > 0,
    firebase: verified && found.firebase?.databaseURL != null,
  }
}

/** What the page load revealed, in words: leaked secrets, a redirect to another origin, and what was (not) found. */
function notesOnFindings(url: URL, origin: string, found: BundleFindings): string[] {
  const notes: string[] = []
  for (const s of found.leakedSecrets) notes.push(`${SECRET_ADVICE[s.kind]} (in ${s.where})`)
  if (origin !== url.origin) notes.push(`${url.origin} redirected to ${origin}; verification is looked up for ${origin}.`)
  const sb = found.supabase
  const fb = found.firebase
  if (!sb && !fb) notes.push('No Supabase or Firebase configuration was found in the page or its same-origin scripts.')
  if (sb && !sb.key)
    notes.push('A Supabase project URL was found but no anon or publishable key, so no data request can be made as the app makes it.')
  if (sb?.key && sb.tables.length === 0)
    notes.push(
      "No table names were found in the bundle (.from('name') or /rest/v1/name); hosted Supabase hides the table list from anon keys.",
    )
  if (fb && !fb.databaseURL) notes.push('A Firebase project was found without a Realtime Database URL; Firestore is not checked.')
  if (fb?.webApiKey) notes.push('A Firebase web API key (AIza...) is in the bundle: it is public by design and not a leak on its own.')
  if (sb?.key) notes.push(`The ${sb.key.kind} key is public by design; what it can read depends on row level security and grants.`)
  return notes
}

/** Each table the bundle names, read anonymously when the app is verified and a key was found (within the time
 * budget), else marked not checked with the reason. */
async function supabaseTables(
  http: EgressHttp,
  sb: BundleFindings['supabase'],
  allowed: boolean,
  app: { verified: boolean; origin: string },
  signal: AbortSignal | undefined,
  progress: Progress,
): Promise<TableResult[]> {
  const tables = sb?.tables ?? []
  if (!allowed || !sb?.key) {
    const why = !app.verified
      ? `not requested: ${app.origin} is not verified by this account`
      : 'not requested: no anon or publishable key was found'
    return tables.map((name) => notChecked(name, why))
  }
  const key = sb.key
  const deadline = Date.now() + EXPOSURE_LIMITS.probeBudgetMs
  let done = 0
  return mapLimit(tables, EXPOSURE_LIMITS.concurrency, async (name) => {
    if (Date.now() > deadline || signal?.aborted) return notChecked(name, 'time budget for data requests used up')
    const r = await probeTable(http, sb.projectUrl, key, name)
    await progress(40 + Math.round((50 * ++done) / tables.length), `checked table ${name}`)
    return r
  })
}

/** The Realtime Database's root, read anonymously when the app is verified and its URL was found. */
async function firebaseDatabase(
  http: EgressHttp,
  fb: BundleFindings['firebase'],
  allowed: boolean,
  origin: string,
): Promise<ExposureResult['firebase']> {
  if (!fb) return null
  const probe =
    allowed && fb.databaseURL != null
      ? await probeFirebase(http, fb.databaseURL)
      : {
          readable: null,
          status: 'not_checked' as const,
          topLevelKeys: null,
          httpStatus: null,
          detail: fb.databaseURL ? `not requested: ${origin} is not verified by this account` : 'no Realtime Database URL found',
        }
  return { databaseURL: fb.databaseURL, projectId: fb.projectId, ...probe }
}

function resultOf(
  url: URL,
  bundle: Bundle,
  found: BundleFindings,
  got: { verified: boolean; probed: boolean; tables: TableResult[]; firebase: ExposureResult['firebase']; notes: string[] },
): ExposureResult {
  const sb = found.supabase
  const exposed = got.tables.filter((t) => t.readable === true).map((t) => t.name)
  if (got.firebase?.readable === true) exposed.push('firebase:/')
  return {
    url: url.href,
    finalUrl: bundle.finalUrl,
    origin: bundle.origin,
    verified: got.verified,
    probed: got.probed,
    supabase: sb
      ? { projectUrl: sb.projectUrl, keyKind: sb.key?.kind ?? null, tables: got.tables, otherProjectUrls: sb.otherProjectUrls }
      : null,
    firebase: got.firebase,
    exposed,
    leakedSecrets: found.leakedSecrets,
    loaded: {
      page: bundle.finalUrl,
      scripts: bundle.loaded,
      skippedCrossOriginScripts: bundle.skippedCrossOrigin,
      truncatedScripts: bundle.truncated,
    },
    notes: got.notes,
  }
}

/** Data requests were possible but not made: say so, and point at verify_site. */
function askToVerify(result: ExposureResult): void {
  result.notes.push(
    'Data requests were not made: reading beyond what the page load already gives needs verify_site for this app. Verify it, then call check_data_exposure again.',
  )
  result.nextStep = {
    tool: 'verify_site',
    arguments: { url: `${result.origin}/` },
    why: 'Reading the tables and database found here needs proof that this account controls the app.',
  }
}

/** Data exposure checks for tools: plain values in and out. */
export class ExposureService {
  constructor(private deps: Pick<ExposureDeps, 'sql' | 'config'>) {}

  check(principal: Principal, url: string, call: Pick<ExposureDeps, 'signal' | 'progress'> = {}): Promise<ExposureResult> {
    return checkDataExposure({ ...this.deps, ...call }, principal.account.id, url)
  }
}
