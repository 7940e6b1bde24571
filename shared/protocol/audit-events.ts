// Events a worker publishes while it runs an audit (progress, then done), for anyone watching it live.
// Pollers never depend on them: get_audit reads Postgres, which the worker updates as well.
import type { AuditProgress, AuditStatus } from '../db/audits.ts'

export type AuditEvent =
  | ({ type: 'progress' } & AuditProgress)
  | { type: 'done'; status: Extract<AuditStatus, 'completed' | 'failed' | 'cancelled'> }

export const auditChannel = (auditId: string) => `audit:${auditId}`

export function parseAuditEvent(raw: string): AuditEvent | null {
  try {
    const e = JSON.parse(raw) as AuditEvent
    return e && (e.type === 'progress' || e.type === 'done') ? e : null
  } catch {
    return null
  }
}
