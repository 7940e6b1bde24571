// Incidents: opened and resolved by operators (server/admin-incidents.ts), listed while unresolved by the
// public status endpoint (api/status/).
import { newId } from '../lib/ids.ts'
import type { Sql } from './index.ts'

export const SEVERITIES = ['minor', 'major', 'critical'] as const
export type Severity = (typeof SEVERITIES)[number]

/** Limits the table's CHECK constraints hold too (shared/db/migrations/006_incidents.sql). */
export const TITLE_MAX = 200
export const MESSAGE_MAX = 2000

export interface Incident {
  id: string
  title: string
  severity: Severity
  message: string | null
  startedAt: Date
  resolvedAt: Date | null
}

type Row = { id: string; title: string; severity: Severity; message: string | null; started_at: Date; resolved_at: Date | null }
const toIncident = (r: Row): Incident => ({
  id: r.id,
  title: r.title,
  severity: r.severity,
  message: r.message,
  startedAt: r.started_at,
  resolvedAt: r.resolved_at,
})

export async function openIncident(sql: Sql, i: { title: string; severity: Severity; message: string | null }): Promise<Incident> {
  const [row] = await sql<Row[]>`
    INSERT INTO incidents (id, title, severity, message) VALUES (${newId('inc')}, ${i.title}, ${i.severity}, ${i.message})
    RETURNING *`
  return toIncident(row!)
}

export type ResolveOutcome = { kind: 'resolved'; incident: Incident } | { kind: 'already'; incident: Incident } | { kind: 'unknown' }

/** Resolves an incident once; a second call (or a concurrent one) reports when it was resolved before. */
export async function resolveIncident(sql: Sql, id: string): Promise<ResolveOutcome> {
  const [row] = await sql<Row[]>`UPDATE incidents SET resolved_at = now() WHERE id = ${id} AND resolved_at IS NULL RETURNING *`
  if (row) return { kind: 'resolved', incident: toIncident(row) }
  const [seen] = await sql<Row[]>`SELECT * FROM incidents WHERE id = ${id}`
  return seen ? { kind: 'already', incident: toIncident(seen) } : { kind: 'unknown' }
}

/** Unresolved incidents, newest first; bounded, since a public endpoint serves them. */
export const activeIncidents = (sql: Sql, limit = 50) => listIncidents(sql, { all: false, limit })

/** For operators: unresolved incidents, or with `all` the resolved ones too; newest first. */
export async function listIncidents(sql: Sql, opts: { all: boolean; limit: number }): Promise<Incident[]> {
  const rows = opts.all
    ? await sql<Row[]>`SELECT * FROM incidents ORDER BY started_at DESC, id DESC LIMIT ${opts.limit}`
    : await sql<Row[]>`SELECT * FROM incidents WHERE resolved_at IS NULL ORDER BY started_at DESC, id DESC LIMIT ${opts.limit}`
  return rows.map(toIncident)
}
