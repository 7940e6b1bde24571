// `bun run admin incident ...`: the incidents /api/status/active shows (api/status/). Parsed and run for
// server/admin.ts, with its exit codes: 0 done, 1 it could not be done (no such incident, no database),
// 2 a usage error, found before the database is opened.
import { parseArgs } from 'node:util'
import {
  type Incident,
  listIncidents,
  MESSAGE_MAX,
  openIncident,
  resolveIncident,
  SEVERITIES,
  type Severity,
  TITLE_MAX,
} from '../shared/db/incidents.ts'
import type { Sql } from '../shared/db/index.ts'
import { errorMessage } from '../shared/errors.ts'

export const INCIDENT_USAGE = [
  `bun run admin incident open --title TITLE [--severity ${SEVERITIES.join('|')}] [--message TEXT]`,
  'bun run admin incident resolve ID',
  'bun run admin incident list [--all]',
]

const LIST_LIMIT = 100
const isIncidentId = (s: string) => /^inc_[0-9A-Za-z]{10,40}$/.test(s)

type Parsed =
  | { kind: 'open'; title: string; severity: Severity; message: string | null }
  | { kind: 'resolve'; id: string }
  | { kind: 'list'; all: boolean }

/** The command line, or why it is not one. */
function parse(argv: string[]): Parsed | string {
  const [sub, ...rest] = argv
  try {
    if (sub === 'open') {
      const { values } = parseArgs({
        args: rest,
        options: { title: { type: 'string' }, severity: { type: 'string', default: 'minor' }, message: { type: 'string' } },
      })
      const title = (values.title ?? '').trim()
      if (!title) return '--title is required (what people see on the status page)'
      if (title.length > TITLE_MAX) return `--title is ${title.length} characters; at most ${TITLE_MAX}`
      // One line: `incident list` prints one incident a line, and status pages show it as a heading.
      if ([...title].some((c) => c < ' ' || c === '\x7f')) return '--title must be one line of text'
      if (!SEVERITIES.includes(values.severity as Severity)) {
        return `--severity must be one of ${SEVERITIES.join(', ')} (got ${JSON.stringify(values.severity)})`
      }
      const message = values.message?.trim() || null
      if (message && message.length > MESSAGE_MAX) return `--message is ${message.length} characters; at most ${MESSAGE_MAX}`
      return { kind: 'open', title, severity: values.severity as Severity, message }
    }
    if (sub === 'resolve') {
      const { positionals } = parseArgs({ args: rest, options: {}, allowPositionals: true })
      if (positionals.length !== 1) return 'resolve takes one incident id'
      if (!isIncidentId(positionals[0]!)) return `${JSON.stringify(positionals[0])} is not an incident id (inc_...)`
      return { kind: 'resolve', id: positionals[0]! }
    }
    if (sub === 'list') {
      const { values } = parseArgs({ args: rest, options: { all: { type: 'boolean', default: false } } })
      return { kind: 'list', all: values.all ?? false }
    }
  } catch (e) {
    return errorMessage(e)
  }
  return sub ? `unknown incident command ${JSON.stringify(sub)}` : 'incident needs a command: open, resolve or list'
}

const line = (i: Incident) =>
  [i.id, i.severity, i.startedAt.toISOString(), i.resolvedAt ? `resolved ${i.resolvedAt.toISOString()}` : 'open', i.title].join('\t')

/** Where a command's lines go: the terminal, or the answer of the running service's admin channel. */
export interface AdminIO {
  out(line: string): void
  err(line: string): void
}

export type IncidentCommand = Parsed

/** The incident command line, or why it is not one (with the usage appended). */
export function parseIncident(argv: string[], usage: string): IncidentCommand | { usage: string } {
  const parsed = parse(argv)
  return typeof parsed === 'string' ? { usage: `${parsed}\n${usage}` } : parsed
}

export async function runIncident(parsed: IncidentCommand, sql: Sql, io: AdminIO): Promise<number> {
  switch (parsed.kind) {
    case 'open': {
      const incident = await openIncident(sql, parsed)
      io.err(`incident opened (${incident.severity}); /api/status/active shows it until it is resolved:`)
      io.out(incident.id)
      return 0
    }
    case 'resolve': {
      const r = await resolveIncident(sql, parsed.id)
      if (r.kind === 'unknown') {
        io.err(`no incident ${parsed.id}`)
        return 1
      }
      // Resolving twice is not an error: a script that retries gets the state it asked for.
      io.err(
        r.kind === 'resolved'
          ? `incident ${parsed.id} resolved`
          : `incident ${parsed.id} was already resolved at ${r.incident.resolvedAt?.toISOString()}`,
      )
      return 0
    }
    case 'list': {
      const rows = await listIncidents(sql, { all: parsed.all, limit: LIST_LIMIT })
      for (const i of rows) io.out(line(i))
      if (!rows.length) io.err(parsed.all ? 'no incidents' : 'no unresolved incidents')
      return 0
    }
  }
}
