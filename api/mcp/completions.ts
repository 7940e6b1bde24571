// completion/complete for the arguments of the prompts (prompts.ts) and resource templates (resources.ts):
// url from this account's apps, scanId and auditId from its recent scans and audits, checkId from the
// check catalogue, and the fixed values of platform, minScore and failOn. Everything read is the calling
// account's. A reference or argument we do not complete answers no values, as does a value too long to be
// the start of any of them: the MCP spec makes completions suggestions, never errors.
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { CompleteRequestSchema, type CompleteResult } from '@modelcontextprotocol/sdk/types.js'
import { CHECKS } from '../../shared/checks/registry.ts'
import { PLATFORMS } from '../../shared/checks/types.ts'
import type { Principal } from '../../shared/db/accounts.ts'
import type { Services } from '../services.ts'
import { PROMPTS, SEVERITIES } from './prompts.ts'
import { principalOf, TEMPLATES } from './resources.ts'

/** The MCP spec's cap on values in one answer. */
const MAX_VALUES = 100
/** How many of the account's newest scans and audits, or apps, are looked through. */
const RECENT = 100
/** No id, URL or name we complete is longer. */
const MAX_VALUE_CHARS = 2048

type Source = (services: Services, principal: Principal) => Promise<readonly string[]>

const fixed =
  (values: readonly string[]): Source =>
  async () =>
    values

const recentIds =
  (kind: 'scan' | 'audit'): Source =>
  async (services, principal) =>
    (await services.scans.history(principal, { limit: RECENT })).items.filter((h) => h.kind === kind).map((h) => h.id)

const appUrls: Source = async (services, principal) =>
  (await services.scans.apps(principal, { limit: RECENT })).items.map((a) => `${a.origin}/`)

/** Where each argument's values come from, by the name of the argument. */
const SOURCES: Record<string, Source> = {
  url: appUrls,
  platform: fixed(PLATFORMS),
  minScore: fixed(['90', '80', '70', '50']),
  failOn: fixed(SEVERITIES),
  scanId: recentIds('scan'),
  auditId: recentIds('audit'),
  checkId: fixed(CHECKS.map((c) => c.id)),
}

/** The arguments each prompt and each resource template takes: only these are completed. */
const ARGUMENTS = new Map<string, string[]>([
  ...PROMPTS.map((p) => [`ref/prompt:${p.name}`, (p.arguments ?? []).map((a) => a.name)] as [string, string[]]),
  ...TEMPLATES.map((t) => [`ref/resource:${t.uriTemplate}`, [/\{(\w+)\}/.exec(t.uriTemplate)![1]!]] as [string, string[]]),
])

const NONE: CompleteResult = { completion: { values: [], total: 0, hasMore: false } }

/** Values that start with what was typed (a URL also by its host, without the scheme), at most MAX_VALUES. */
export function matching(values: readonly string[], typed: string): CompleteResult {
  const t = typed.toLowerCase()
  const found = values.filter((v) => {
    const l = v.toLowerCase()
    return l.startsWith(t) || l.replace(/^https?:\/\//, '').startsWith(t)
  })
  return { completion: { values: found.slice(0, MAX_VALUES), total: found.length, hasMore: found.length > MAX_VALUES } }
}

/** Declares completions and answers completion/complete. */
export function registerCompletions(server: Server, services: Services): void {
  server.registerCapabilities({ completions: {} })
  server.setRequestHandler(CompleteRequestSchema, async (req, extra): Promise<CompleteResult> => {
    const { ref, argument } = req.params
    const key = ref.type === 'ref/prompt' ? `ref/prompt:${ref.name}` : `ref/resource:${ref.uri}`
    if (!ARGUMENTS.get(key)?.includes(argument.name) || argument.value.length > MAX_VALUE_CHARS) return NONE
    const source = Object.hasOwn(SOURCES, argument.name) ? SOURCES[argument.name] : undefined
    if (!source) return NONE
    return matching(await source(services, principalOf(extra)), argument.value)
  })
}
