// What the dashboard's forms take: the start forms' URL, and an audit's bounds, the same ones audit_app's
// input has (api/mcp/tools/schemas.ts), so a person and an agent are held to one rule.
import { Value } from '@sinclair/typebox/value'
import { t } from 'elysia'
import { AuditOptionsInput } from '../mcp/tools/schemas.ts'

/** The URL of a start form: a page's address, at most 2048 characters. */
export const StartUrl = t.String({ minLength: 1, maxLength: 2_048 })

/** An audit's bounds from the start form, each optional. */
export const AuditBounds = t.Pick(AuditOptionsInput(), ['maxPages', 'maxDepth'])

/** Start an audit: the fields of the dashboard's form, or what is wrong with them. */
export function auditOptions(form: URLSearchParams): { maxPages?: number; maxDepth?: number } | string {
  const options: { maxPages?: number; maxDepth?: number } = {}
  for (const name of ['maxPages', 'maxDepth'] as const) {
    const raw = form.get(name)
    if (raw === null || raw.trim() === '') continue
    const schema = AuditBounds.properties[name]
    const n = Number(raw)
    if (!Value.Check(schema, n)) return `${name} must be a whole number from ${schema.minimum} to ${schema.maximum}.`
    options[name] = n
  }
  return options
}
