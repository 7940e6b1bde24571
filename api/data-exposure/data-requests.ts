// The data requests beyond the page load, made only for an app this account has verified: anonymous,
// read-only requests (GET/HEAD) with the app's own public key to the Supabase REST API, one table at a time,
// and to the Firebase Realtime Database's root. Rows that come back are redacted before they are returned.
import type { EgressHttp, FetchOutcome } from '../../shared/egress/http.ts'
import type { SupabaseKeyKind } from './bundle.ts'
import { EXPOSURE_LIMITS, type ExposureResult, type TableResult } from './model.ts'
import { redact } from './redact.ts'

const failText = (f: Extract<FetchOutcome, { ok: false }>) => `${f.code}: ${f.reason}`

export function notChecked(name: string, detail: string): TableResult {
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

export async function probeTable(
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

export async function probeFirebase(
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
