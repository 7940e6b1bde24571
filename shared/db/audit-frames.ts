// Rows of audit_frames (migration 015): the replay of an audit's crawl, one still per page judged.
import type { Sql } from './index.ts'

/** What one audit's replay may hold: enough for one still per page of a 500-page audit, a few MB at most. */
export const REPLAY_LIMITS = { maxFrames: 500, maxBytes: 8 * 1024 * 1024, maxUrlChars: 2048 } as const

export interface ReplayFrame {
  seq: number
  at: Date
  url: string
  bytes: number
}

/** How much of the cap an audit's replay uses, and the next sequence number (a resumed crawl goes on from it). */
export async function replayUsage(sql: Sql, auditId: string): Promise<{ frames: number; bytes: number; nextSeq: number }> {
  const [r] = await sql<{ frames: number; bytes: number; last: number | null }[]>`
    SELECT count(*)::int AS frames, coalesce(sum(octet_length(jpeg)), 0)::int AS bytes, max(seq) AS last
    FROM audit_frames WHERE audit_id = ${auditId}`
  return { frames: r!.frames, bytes: r!.bytes, nextSeq: (r!.last ?? 0) + 1 }
}

export async function storeAuditFrame(sql: Sql, auditId: string, seq: number, url: string, jpeg: Uint8Array): Promise<void> {
  await sql`
    INSERT INTO audit_frames (audit_id, seq, url, jpeg)
    VALUES (${auditId}, ${seq}, ${url.slice(0, REPLAY_LIMITS.maxUrlChars)}, ${jpeg})
    ON CONFLICT (audit_id, seq) DO NOTHING`
}

/** The replay's frames in order, without their images. */
export async function listAuditFrames(sql: Sql, auditId: string): Promise<ReplayFrame[]> {
  const rows = await sql<{ seq: number; at: Date; url: string; bytes: number }[]>`
    SELECT seq, at, url, octet_length(jpeg)::int AS bytes FROM audit_frames WHERE audit_id = ${auditId} ORDER BY seq`
  return rows.map((r) => ({ seq: r.seq, at: r.at, url: r.url, bytes: r.bytes }))
}

/**
 * One frame's JPEG, or null: of an audit of `accountId` (the owner), or of any audit when the caller has
 * checked the audit may be seen (a shared report).
 */
export async function readAuditFrame(sql: Sql, auditId: string, seq: number, accountId?: string): Promise<Uint8Array | null> {
  const [r] =
    accountId === undefined
      ? await sql<{ jpeg: Uint8Array }[]>`SELECT jpeg FROM audit_frames WHERE audit_id = ${auditId} AND seq = ${seq}`
      : await sql<{ jpeg: Uint8Array }[]>`
          SELECT f.jpeg FROM audit_frames f JOIN audits a ON a.id = f.audit_id
          WHERE f.audit_id = ${auditId} AND f.seq = ${seq} AND a.account_id = ${accountId}`
  return r?.jpeg ?? null
}
