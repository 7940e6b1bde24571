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
import type { Sql } from '../../shared/db/index.ts'
import { isVerified } from '../../shared/db/verifications.ts'
import { AppError } from '../../shared/errors.ts'
import { findInBundle, importedScripts, type BundleFindings, type Source, type SupabaseKeyKind } from './bundle.ts'
import { EgressHttp, type FetchOutcome } from '../../shared/egress/http.ts'
import { redact } from './redact.ts'
import { checkTarget } from '../http/target.ts'
import { mapLimit } from '../../shared/lib/async.ts'
import type { Principal } from '../../shared/db/accounts.ts'

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

export interface ExposureDeps {
  sql: Sql
  config: Pick<Config, 'ALLOW_PRIVATE_TARGETS' | 'trustedTargetHosts' | 'PROBE_TIMEOUT_MS'>
  signal?: AbortSignal
  progress?: (progress: number, total: number, message: string) => Promise<void>
}

/** Script URLs and inline script bodies of a page. */
async function pageScripts(html: string, pageUrl: string): Promise<{ srcs: string[]; inline: string[] }> {
  const srcs: string[] = []
  const inline: string[] = []
  let current: string[] | null = null
  const add = (raw: string | null) => {
    if (!raw) return
    try {
      const u = new URL(raw.trim(), pageUrl)
      if ((u.protocol === 'http:' || u.protocol === 'https:') && !srcs.includes(u.href)) srcs.push(u.href)
    } catch {}
  }
  await new HTMLRewriter()
    .on('script', {
      element(e) {
        const src = e.getAttribute('src')
        if (src !== null) return add(src)
        const type = (e.getAttribute('type') ?? '').toLowerCase()
        if (type && !/javascript|module|json|ecmascript/.test(type)) return
        current = []
        inline.push('')
        e.onEndTag(() => {
          inline[inline.length - 1] = current!.join('')
          current = null
        })
      },
      text(t) {
        current?.push(t.text)
      },
    })
    .on('link', {
      element(e) {
        const rel = (e.getAttribute('rel') ?? '').toLowerCase()
        const as = (e.getAttribute('as') ?? '').toLowerCase()
        if (rel.includes('modulepreload') || (rel.includes('preload') && as === 'script')) add(e.getAttribute('href'))
      },
    })
    .transform(new Response(html))
    .text()
  return { srcs, inline: inline.filter(Boolean) }
}

const failText = (f: Extract<FetchOutcome, { ok: false }>) => `${f.code}: ${f.reason}`

/** The page and its same-origin scripts, as an anonymous visitor's page load gets them. */
async function loadBundle(http: EgressHttp, url: URL) {
  const page = await http.get(url.href, {
    redirects: 'any',
    bodyLimit: EXPOSURE_LIMITS.pageBytes,
    headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' },
  })
  if (!page.ok) {
    throw new AppError(page.code, `${url.href} could not be loaded (${page.reason})`, { reason: page.reason })
  }
  const finalUrl = page.res.url
  const origin = new URL(finalUrl).origin
  const notes: string[] = []
  if (page.res.status >= 400) notes.push(`The page answered ${page.res.status}; its body was searched all the same.`)
  const { srcs, inline } = await pageScripts(page.res.body, finalUrl)
  const sources: Source[] = [{ url: finalUrl, text: page.res.body }, ...inline.map((text) => ({ url: finalUrl, text }))]

  const queue = srcs.filter((s) => new URL(s).origin === origin)
  const seen = new Set(queue)
  let skippedCrossOrigin = srcs.length - queue.length
  const loaded: string[] = []
  let truncated = 0
  // Breadth-first over scripts and the same-origin modules they import, at most EXPOSURE_LIMITS.scripts fetches.
  while (queue.length && loaded.length < EXPOSURE_LIMITS.scripts) {
    const batch = queue.splice(0, Math.min(EXPOSURE_LIMITS.concurrency, EXPOSURE_LIMITS.scripts - loaded.length))
    const got = await Promise.all(
      batch.map((s) => http.get(s, { redirects: 'same-origin', bodyLimit: EXPOSURE_LIMITS.scriptBytes, headers: { accept: '*/*' } })),
    )
    got.forEach((g, i) => {
      const src = batch[i]!
      loaded.push(src)
      if (!g.ok || g.res.status !== 200) return
      if (g.res.truncated) truncated++
      sources.push({ url: src, text: g.res.body })
      for (const imp of importedScripts(g.res.body, src)) {
        if (seen.has(imp)) continue
        seen.add(imp)
        if (new URL(imp).origin === origin) queue.push(imp)
        else skippedCrossOrigin++
      }
    })
  }
  if (queue.length) notes.push(`${queue.length} more same-origin scripts were not loaded (limit ${EXPOSURE_LIMITS.scripts}).`)
  if (truncated) notes.push(`${truncated} scripts were larger than ${EXPOSURE_LIMITS.scriptBytes} bytes; only their start was searched.`)
  return { finalUrl, origin, sources, loaded, skippedCrossOrigin, truncated, notes }
}

function notChecked(name: string, detail: string): TableResult {
  return { name, readable: null, status: 'not_checked', rowCount: null, sample: null, httpStatus: null, detail }
}

/** Total rows from a PostgREST Content-Range header ("0-2/57", "*\/0"); null when unknown ("0-2/*"). */
export function contentRangeTotal(header: string | null): number | null {
  const m = header ? /\/(\d+)\s*$/.exec(header) : null
  return m ? Number(m[1]) : null
}

function pgrstMessage(body: string): string {
  try {
    const j = JSON.parse(body) as { code?: unknown; message?: unknown }
    const parts = [typeof j.code === 'string' ? j.code : null, typeof j.message === 'string' ? j.message : null].filter(Boolean)
    if (parts.length) return parts.join(' ').slice(0, 200)
  } catch {}
  return body.replace(/\s+/g, ' ').trim().slice(0, 120)
}

async function probeTable(
  http: EgressHttp,
  projectUrl: string,
  key: { kind: SupabaseKeyKind; value: string },
  name: string,
): Promise<TableResult> {
  const base = `${projectUrl}/rest/v1/${encodeURIComponent(name)}`
  // The anon key is a JWT and goes in both headers, as supabase-js sends it; a publishable key is not a
  // JWT and goes in apikey only (the gateway maps it to the anon role).
  const headers: Record<string, string> = { apikey: key.value, accept: 'application/json' }
  if (key.kind === 'anon') headers.authorization = `Bearer ${key.value}`
  const got = await http.once(`${base}?select=*&limit=${EXPOSURE_LIMITS.sampleRows}`, { headers, bodyLimit: EXPOSURE_LIMITS.sampleBytes })
  if (!got.ok) {
    return {
      name,
      readable: null,
      status: got.code === 'target_blocked' ? 'blocked' : 'unreachable',
      rowCount: null,
      sample: null,
      httpStatus: null,
      detail: failText(got),
    }
  }
  const { status, body } = got.res
  const base401 = { name, rowCount: null, sample: null, httpStatus: status }
  if (status === 401 || status === 403)
    return { ...base401, readable: false, status: 'denied', detail: `anonymous read refused: ${pgrstMessage(body)}` }
  if (status === 404) return { ...base401, readable: false, status: 'not_found', detail: `no such table exposed: ${pgrstMessage(body)}` }
  if (status !== 200 && status !== 206)
    return { ...base401, readable: null, status: 'error', detail: `answered ${status}: ${pgrstMessage(body)}` }
  let rows: unknown
  try {
    rows = JSON.parse(body)
  } catch {
    return {
      ...base401,
      readable: null,
      status: 'error',
      detail: got.res.truncated ? 'the answer was too large to read' : 'the answer is not JSON',
    }
  }
  if (!Array.isArray(rows)) return { ...base401, readable: null, status: 'error', detail: 'the answer is not a JSON array' }
  if (rows.length === 0) {
    return {
      ...base401,
      readable: null,
      status: 'empty_or_rls',
      detail: 'answered 200 with no rows: row level security hides them, or the table is empty',
    }
  }
  const sample = rows.slice(0, EXPOSURE_LIMITS.sampleRows).map((r) => redact(r))
  const counted = await http.once(`${base}?select=*`, {
    method: 'HEAD',
    headers: { ...headers, prefer: 'count=exact', 'range-unit': 'items', range: '0-0' },
  })
  const rowCount = counted.ok ? contentRangeTotal(counted.res.headers.get('content-range')) : null
  return {
    name,
    readable: true,
    status: 'exposed',
    rowCount,
    sample,
    httpStatus: status,
    detail: `anonymous reads return rows${rowCount === null ? '; the row count was not given' : ''}`,
  }
}

async function probeFirebase(
  http: EgressHttp,
  databaseURL: string,
): Promise<Omit<NonNullable<ExposureResult['firebase']>, 'databaseURL' | 'projectId'>> {
  const got = await http.once(`${databaseURL}/.json?shallow=true`, { headers: { accept: 'application/json' }, bodyLimit: 64 * 1024 })
  if (!got.ok) {
    return {
      readable: null,
      status: got.code === 'target_blocked' ? 'blocked' : 'unreachable',
      topLevelKeys: null,
      httpStatus: null,
      detail: failText(got),
    }
  }
  const { status, body } = got.res
  let json: unknown
  try {
    json = JSON.parse(body)
  } catch {}
  const error =
    json && typeof json === 'object' && typeof (json as { error?: unknown }).error === 'string' ? (json as { error: string }).error : null
  if (status === 401 || status === 403 || (error && /permission denied/i.test(error))) {
    return {
      readable: false,
      status: 'denied',
      topLevelKeys: null,
      httpStatus: status,
      detail: `anonymous read refused${error ? `: ${error}` : ''}`,
    }
  }
  if (status === 404)
    return { readable: false, status: 'not_found', topLevelKeys: null, httpStatus: status, detail: error ?? 'no such database' }
  if (status !== 200 || json === undefined || error) {
    return { readable: null, status: 'error', topLevelKeys: null, httpStatus: status, detail: error ?? `answered ${status}` }
  }
  if (json === null) {
    return {
      readable: true,
      status: 'open_empty',
      topLevelKeys: [],
      httpStatus: status,
      detail: 'the rules allow anonymous reads of the root; the database is empty',
    }
  }
  const keys = typeof json === 'object' && !Array.isArray(json) ? Object.keys(json as object).slice(0, 20) : []
  return { readable: true, status: 'open', topLevelKeys: keys, httpStatus: status, detail: 'anonymous reads of the root return data' }
}

const SECRET_ADVICE: Record<BundleFindings['leakedSecrets'][number]['kind'], string> = {
  supabase_service_role_jwt:
    'A Supabase service_role key is in the JavaScript: it bypasses row level security for anyone. Rotate it now and keep it on the ' +
    'server.',
  supabase_secret_key:
    'A Supabase secret key (sb_secret_) is in the JavaScript: it bypasses row level security for anyone. Rotate it now and keep it on ' +
    'the server.',
}

export async function checkDataExposure(deps: ExposureDeps, accountId: string, rawUrl: string): Promise<ExposureResult> {
  const url = await checkTarget(deps.config, rawUrl, { refuseUnreachable: true })
  const progress = (n: number, message: string) => deps.progress?.(n, 100, message).catch(() => {})
  const http = await EgressHttp.open(deps.config, deps.signal)
  try {
    await progress(5, 'loading the page')
    const bundle = await loadBundle(http, url)
    const found = findInBundle(bundle.sources)
    const notes = [...bundle.notes]
    for (const s of found.leakedSecrets) notes.push(`${SECRET_ADVICE[s.kind]} (in ${s.where})`)
    const verified = await isVerified(deps.sql, accountId, bundle.origin)
    if (bundle.origin !== url.origin)
      notes.push(`${url.origin} redirected to ${bundle.origin}; verification is looked up for ${bundle.origin}.`)
    await progress(40, 'searched the page and its scripts')

    const sb = found.supabase
    const tables = sb?.tables ?? []
    const canProbeSupabase = verified && sb !== null && sb.key !== null && tables.length > 0
    const fb = found.firebase
    const canProbeFirebase = verified && fb?.databaseURL != null
    const probed = canProbeSupabase || canProbeFirebase

    if (!sb && !fb) notes.push('No Supabase or Firebase configuration was found in the page or its same-origin scripts.')
    if (sb && !sb.key)
      notes.push('A Supabase project URL was found but no anon or publishable key, so no data request can be made as the app makes it.')
    if (sb?.key && tables.length === 0)
      notes.push(
        "No table names were found in the bundle (.from('name') or /rest/v1/name); hosted Supabase hides the table list from anon keys.",
      )
    if (fb && !fb.databaseURL) notes.push('A Firebase project was found without a Realtime Database URL; Firestore is not checked.')
    if (fb?.webApiKey) notes.push('A Firebase web API key (AIza...) is in the bundle: it is public by design and not a leak on its own.')
    if (sb?.key) notes.push(`The ${sb.key.kind} key is public by design; what it can read depends on row level security and grants.`)

    let tableResults: TableResult[]
    if (canProbeSupabase) {
      const deadline = Date.now() + EXPOSURE_LIMITS.probeBudgetMs
      let done = 0
      tableResults = await mapLimit(tables, EXPOSURE_LIMITS.concurrency, async (name) => {
        if (Date.now() > deadline || deps.signal?.aborted) return notChecked(name, 'time budget for data requests used up')
        const r = await probeTable(http, sb.projectUrl, sb.key!, name)
        await progress(40 + Math.round((50 * ++done) / tables.length), `checked table ${name}`)
        return r
      })
    } else {
      const why = !verified
        ? `not requested: ${bundle.origin} is not verified by this account`
        : 'not requested: no anon or publishable key was found'
      tableResults = tables.map((name) => notChecked(name, why))
    }

    let firebase: ExposureResult['firebase'] = null
    if (fb) {
      const probe = canProbeFirebase
        ? await probeFirebase(http, fb.databaseURL!)
        : {
            readable: null,
            status: 'not_checked' as const,
            topLevelKeys: null,
            httpStatus: null,
            detail: fb.databaseURL ? `not requested: ${bundle.origin} is not verified by this account` : 'no Realtime Database URL found',
          }
      firebase = { databaseURL: fb.databaseURL, projectId: fb.projectId, ...probe }
    }

    const exposed = tableResults.filter((t) => t.readable === true).map((t) => t.name)
    if (firebase?.readable === true) exposed.push('firebase:/')
    const result: ExposureResult = {
      url: url.href,
      finalUrl: bundle.finalUrl,
      origin: bundle.origin,
      verified,
      probed,
      supabase: sb
        ? { projectUrl: sb.projectUrl, keyKind: sb.key?.kind ?? null, tables: tableResults, otherProjectUrls: sb.otherProjectUrls }
        : null,
      firebase,
      exposed,
      leakedSecrets: found.leakedSecrets,
      loaded: {
        page: bundle.finalUrl,
        scripts: bundle.loaded,
        skippedCrossOriginScripts: bundle.skippedCrossOrigin,
        truncatedScripts: bundle.truncated,
      },
      notes,
    }
    if (!verified && ((sb?.key && tables.length > 0) || fb?.databaseURL)) {
      notes.push(
        'Data requests were not made: reading beyond what the page load already gives needs verify_site for this app. Verify it, then call check_data_exposure again.',
      )
      result.nextStep = {
        tool: 'verify_site',
        arguments: { url: `${bundle.origin}/` },
        why: 'Reading the tables and database found here needs proof that this account controls the app.',
      }
    }
    await progress(100, 'done')
    return result
  } finally {
    await http.close()
  }
}

/** Data exposure checks for tools: plain values in and out. */
export class ExposureService {
  constructor(private deps: Pick<ExposureDeps, 'sql' | 'config'>) {}

  check(principal: Principal, url: string, call: Pick<ExposureDeps, 'signal' | 'progress'> = {}): Promise<ExposureResult> {
    return checkDataExposure({ ...this.deps, ...call }, principal.account.id, url)
  }
}
