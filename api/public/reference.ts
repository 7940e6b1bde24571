// The parts of the docs that are generated from the registries, so they cannot drift from what the
// service does: a tool's plan, description and argument table (from its TypeBox schema, the same JSON
// Schema tools/list returns), every check with its title, category, severity and penalty, the grade
// scale, and every tool error code with what it means. The markdown under docs/ names where each goes with a marker line.
import { CHECKS } from '../../shared/checks/registry.ts'
import { ERROR_CODES } from '../../shared/errors.ts'
import { GRADES, penaltyRow } from '../../shared/report/scoring.ts'
import { TOOLS } from '../mcp/tools/registry.ts'
import type { Tool } from '../mcp/tools/types.ts'

/** A JSON Schema as tools/list sends it (TypeBox's symbols dropped). */
interface JsonSchema {
  type?: string
  description?: string
  properties?: Record<string, JsonSchema>
  patternProperties?: Record<string, JsonSchema>
  required?: string[]
  items?: JsonSchema
  anyOf?: JsonSchema[]
  const?: unknown
  minimum?: number
  maximum?: number
  minLength?: number
  maxLength?: number
  minItems?: number
  maxItems?: number
  default?: unknown
}

const PLAN_NAMES = { free: 'every plan', launch: 'Launch and Scale', scale: 'Scale' } as const

/** A table cell: one line, pipes escaped (a pipe would end the cell). */
const cell = (s: string) => s.replace(/\r?\n/g, ' ').replace(/\|/g, '\\|')

const code = (s: unknown) => `\`${String(s)}\``

function range(min: number | undefined, max: number | undefined, unit: string): string {
  if (min !== undefined && max !== undefined) return `${min}-${max}${unit}`
  if (max !== undefined) return `at most ${max}${unit}`
  if (min !== undefined) return `at least ${min}${unit}`
  return ''
}

/** What a value of the schema looks like, in a few words. */
function typeOf(s: JsonSchema): string {
  if (s.anyOf?.every((o) => o.const !== undefined)) return `one of ${s.anyOf.map((o) => code(o.const)).join(', ')}`
  if (s.type === 'array') {
    const count = range(s.minItems, s.maxItems, ' items')
    return `array of ${s.items ? typeOf(s.items) : 'values'}${count ? ` (${count})` : ''}`
  }
  if (s.type === 'object') return s.patternProperties ? 'object of string values' : 'object'
  if (s.type === 'integer' || s.type === 'number') {
    const r = range(s.minimum, s.maximum, '')
    return `${s.type}${r ? ` ${r}` : ''}`
  }
  if (s.type === 'string') {
    const r = s.maxLength !== undefined && s.maxLength <= 100 ? range(s.minLength, s.maxLength, ' characters') : ''
    return `string${r ? ` (${r})` : ''}`
  }
  return s.type ?? 'any'
}

interface ArgumentRow {
  path: string
  type: string
  required: boolean
  description: string
}

/** One row per argument; the fields of an object argument (or of an array's objects) follow it, dotted. */
function argumentRows(schema: JsonSchema, prefix = ''): ArgumentRow[] {
  const rows: ArgumentRow[] = []
  const required = new Set(schema.required ?? [])
  for (const [name, prop] of Object.entries(schema.properties ?? {})) {
    const path = `${prefix}${name}`
    const dflt = prop.default !== undefined ? ` Default ${JSON.stringify(prop.default)}.` : ''
    rows.push({ path, type: typeOf(prop), required: required.has(name), description: `${prop.description ?? ''}${dflt}`.trim() })
    if (prop.type === 'object' && prop.properties) rows.push(...argumentRows(prop, `${path}.`))
    if (prop.type === 'array' && prop.items?.type === 'object' && prop.items.properties)
      rows.push(...argumentRows(prop.items, `${path}[].`))
  }
  return rows
}

/** A tool's section body: who may call it, what tools/list says it does, and its arguments. */
export function toolReference(tool: Tool): string {
  const schema = JSON.parse(JSON.stringify(tool.input)) as JsonSchema
  const a = tool.annotations
  const traits = [
    a.readOnlyHint ? 'read-only' : 'changes state',
    a.idempotentHint ? 'idempotent' : null,
    a.openWorldHint ? 'reaches the target' : null,
  ]
  const lines = [
    `**Plan:** ${PLAN_NAMES[tool.plan]} · ${traits.filter(Boolean).join(' · ')}${tool.run ? '' : ' · answers `not_implemented` until built'}`,
    '',
    tool.description,
    '',
  ]
  const rows = argumentRows(schema)
  if (rows.length === 0) {
    lines.push('No arguments: send `"arguments": {}`.')
    return lines.join('\n')
  }
  lines.push('| argument | type | required | description |', '|---|---|---|---|')
  for (const r of rows) lines.push(`| ${code(r.path)} | ${cell(r.type)} | ${r.required ? 'yes' : 'no'} | ${cell(r.description)} |`)
  return lines.join('\n')
}

const CATEGORY_NAMES: Record<string, string> = {
  security: 'Security headers and policies',
  https: 'HTTPS and TLS',
  cookies: 'Cookies',
  exposure: 'Exposed files',
  secrets: 'Secrets in JavaScript',
  seo: 'SEO',
  performance: 'Performance',
  accessibility: 'Accessibility',
  privacy: 'Privacy',
}

/** Every registered check, grouped by category in report order: id, title, severity, penalty, what it looks at. */
export function checksReference(): string {
  const byCategory = new Map<string, (typeof CHECKS)[number][]>()
  for (const c of CHECKS) byCategory.set(c.category, [...(byCategory.get(c.category) ?? []), c])
  const out: string[] = []
  for (const [category, checks] of byCategory) {
    out.push(`### ${CATEGORY_NAMES[category] ?? category} (\`${category}\`)`, '')
    for (const c of checks) {
      const p = penaltyRow(c.id) ?? { fail: 0, warn: 0 }
      out.push(
        `#### ${code(c.id)}`,
        '',
        `**${c.title}** · category ${code(c.category)} · severity ${code(c.severity)} · penalty: fail ${p.fail}, warn ${p.warn}`,
        '',
        c.description,
        '',
        `*Why:* ${c.why}`,
        '',
      )
    }
  }
  return out.join('\n').trimEnd()
}

/** The grade scale: the lowest score of each grade, best first. */
export function gradesReference(): string {
  return ['| grade | lowest score |', '|---|---|', ...GRADES.map(([min, grade]) => `| ${grade} | ${min} |`)].join('\n')
}

/** Every code a tool error can carry, with what it means for the caller. */
export function errorCodesReference(): string {
  const lines = ['| code | meaning |', '|---|---|']
  for (const [c, message] of Object.entries(ERROR_CODES)) lines.push(`| ${code(c)} | ${cell(message)} |`)
  return lines.join('\n')
}

/**
 * Expands the marker lines of a page: `{tool:NAME}`, `{checks}`, `{grades}` and `{error-codes}`, each alone on its
 * line. A marker naming no tool is a bug in the docs: it throws, so the service does not start with it.
 */
export function expandReferenceMarkers(markdown: string, file: string): string {
  return markdown.replace(/^\{(tool:[a-z_]+|checks|grades|error-codes)\}[ \t]*$/gm, (_m, marker: string) => {
    if (marker === 'checks') return checksReference()
    if (marker === 'grades') return gradesReference()
    if (marker === 'error-codes') return errorCodesReference()
    const name = marker.slice('tool:'.length)
    const tool = TOOLS.find((t) => t.name === name)
    if (!tool) throw new Error(`${file}: {${marker}} names no tool of api/mcp/tools/registry.ts`)
    return toolReference(tool)
  })
}
