// What to tell a caller who names a tool the server does not have: the nearest tool name, by edit
// distance after the usual slips (case, dashes for underscores, a client's namespace prefix), when one
// is near enough to be a likely typo.
import { editDistance } from '../../checks/service.ts'

const normalise = (s: string) =>
  s
    .trim()
    .toLowerCase()
    .replace(/[\s.-]+/g, '_')

/** The tool name `unknown` most likely meant, or null when none is close. */
export function nearestToolName(unknown: string, names: readonly string[]): string | null {
  const q = normalise(unknown)
  if (q === '') return null
  let best: { name: string; distance: number } | null = null
  for (const name of names) {
    // mcp__appaudit__scan_app, appaudit.scan_app: a client's prefix before the real name.
    const distance = q.endsWith(`_${name}`) ? 0 : editDistance(q, name)
    if (!best || distance < best.distance || (distance === best.distance && name < best.name)) best = { name, distance }
  }
  if (!best) return null
  // A third of the name's length in edits: scan_ap, getscan and list-app are typos; drop_database is not.
  return best.distance <= Math.max(2, Math.floor(best.name.length / 3)) ? best.name : null
}

/** The JSON-RPC error message for an unknown tool name. */
export function unknownToolMessage(unknown: string, names: readonly string[]): string {
  const shown = unknown.length > 80 ? `${unknown.slice(0, 80)}...` : unknown
  const near = nearestToolName(unknown, names)
  return near
    ? `Unknown tool: ${shown}. Did you mean ${near}? tools/list lists all ${names.length} tools.`
    : `Unknown tool: ${shown}. tools/list lists all ${names.length} tools.`
}
