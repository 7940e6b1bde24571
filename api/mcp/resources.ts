// MCP resources: the report view (ui://, app/index.ts) and every scan and audit report of the calling
// account, read whole with resources/read. URIs (docs/tools.md, Resources):
//   appaudit://scans/{scanId}    a scan: state and, once completed, the whole report (get_scan detail "full")
//   appaudit://audits/{auditId}  an audit: state, progress and, once completed, the whole result
//   appaudit://checks/{checkId}  a check's explanation (explain_check)
// resources/list pages through the account's scans and audits, newest first (the scan_history cursor);
// a report of another account, or none, is "Resource not found" (-32002), exactly like an unknown URI.
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import {
  type CallToolResult,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ReadResourceRequestSchema,
  type ListResourcesResult,
  type ReadResourceResult,
  type Resource,
  type ResourceLink,
} from '@modelcontextprotocol/sdk/types.js'
import type { Principal } from '../../shared/db/accounts.ts'
import { errorMessage, isAppError } from '../../shared/errors.ts'
import type { Services } from '../services.ts'
import { listAppResources, readAppResource } from './app/index.ts'

export const SCHEME = 'appaudit://'
const JSON_MIME = 'application/json'
/** Reports per page of resources/list: a client may keep the list in its context. */
export const RESOURCES_PAGE = 20
/** JSON-RPC "Resource not found" (MCP spec, resources). */
const RESOURCE_NOT_FOUND = -32002

export const TEMPLATES = [
  { uriTemplate: `${SCHEME}scans/{scanId}`, name: 'scan', title: 'Scan report (whole)', mimeType: JSON_MIME },
  { uriTemplate: `${SCHEME}audits/{auditId}`, name: 'audit', title: 'Audit report (whole)', mimeType: JSON_MIME },
  { uriTemplate: `${SCHEME}checks/{checkId}`, name: 'check', title: 'What a check looks at and how to fix it', mimeType: JSON_MIME },
]

/** The id pattern of each kind, as the tools' Id schemas have it. */
const URI = /^appaudit:\/\/(scans|audits|checks)\/([0-9A-Za-z_-]{1,80})$/
const ID_OF = { scans: /^scn_[0-9A-Za-z]+$/, audits: /^aud_[0-9A-Za-z]+$/, checks: /^[a-z0-9-]+$/ } as const

export const reportUri = (kind: 'scan' | 'audit', id: string) => `${SCHEME}${kind}s/${id}`

/** The resource_link a tool result carries to the whole report (MCP 2025-06-18 on). */
export const reportLink = (kind: 'scan' | 'audit', id: string): ResourceLink => ({
  type: 'resource_link',
  uri: reportUri(kind, id),
  name: id,
  description: `The whole ${kind} report (resources/read).`,
  mimeType: JSON_MIME,
})

/** resource_link content blocks came with MCP 2025-06-18: an older client's schema would refuse the result. */
const LINKS_SINCE = '2025-06-18'
/** The tools whose result links the whole report, and where the report's id is in it. */
const LINKED: Record<string, ['scan' | 'audit', string]> = {
  scan_app: ['scan', 'id'],
  get_scan: ['scan', 'scanId'],
  audit_app: ['audit', 'auditId'],
  get_audit: ['audit', 'auditId'],
}

/** The result with a resource_link to the whole report after its text, for a report tool and a client that reads links. */
export function withReportLink(tool: string, answer: CallToolResult, protocolVersion: string | undefined): CallToolResult {
  const linked = LINKED[tool]
  if (!linked || !protocolVersion || protocolVersion < LINKS_SINCE) return answer
  const id = (answer.structuredContent as Record<string, unknown> | undefined)?.[linked[1]]
  if (typeof id !== 'string') return answer
  answer.content.push(reportLink(linked[0], id))
  return answer
}

export const principalOf = (extra: { authInfo?: { extra?: Record<string, unknown> } }): Principal => {
  const principal = extra.authInfo?.extra?.principal as Principal | undefined
  if (!principal) throw Object.assign(new Error('Unauthenticated request reached the server'), { code: ErrorCode.InternalError })
  return principal
}

const rpcError = (code: number, message: string, data?: unknown) => Object.assign(new Error(message), { code, data })
/** The URI is echoed back, cut: a hostile one may be as long as the body limit allows. */
const notFound = (uri: string) => {
  const shown = uri.length > 200 ? `${uri.slice(0, 200)}...` : uri
  return rpcError(RESOURCE_NOT_FOUND, `Resource not found: ${shown}`, { uri: shown })
}

/** One page of the account's reports (the report view first, on the first page). */
async function listReports(services: Services, principal: Principal, cursor: string | undefined): Promise<ListResourcesResult> {
  if (cursor !== undefined && cursor.length > 200)
    throw rpcError(ErrorCode.InvalidParams, 'Invalid params: cursor is not one this server gave')
  const page = await services.scans.history(principal, { cursor, limit: RESOURCES_PAGE }).catch((e) => {
    if (isAppError(e) && e.code === 'invalid_params')
      throw rpcError(ErrorCode.InvalidParams, 'Invalid params: cursor is not one this server gave')
    throw e
  })
  // No mimeType on each: the templates say application/json once.
  const reports: Resource[] = page.items.map((h) => ({
    uri: reportUri(h.kind, h.id),
    name: h.id,
    title: `${h.url} ${typeof h.score === 'number' ? `${h.score}/100 ${h.grade ?? ''}`.trim() : h.status}`,
  }))
  return {
    resources: cursor === undefined ? [...listAppResources().resources, ...reports] : reports,
    ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
  }
}

/** What a report URI names, read for this account; null when it names nothing of this account's. */
async function readReport(services: Services, principal: Principal, uri: string): Promise<unknown | null> {
  const m = URI.exec(uri)
  const kind = m?.[1] as keyof typeof ID_OF | undefined
  const id = m?.[2]
  if (!kind || !id || !ID_OF[kind].test(id)) return null
  try {
    if (kind === 'scans') return await services.scans.get(principal, id)
    if (kind === 'audits') return await services.audits.whole(principal, id)
    return services.checks.explain(id)
  } catch (e) {
    if (isAppError(e) && e.code === 'not_found') return null
    throw e
  }
}

/** Declares resources and answers resources/list, resources/templates/list and resources/read. */
export function registerResources(server: Server, services: Services): void {
  server.registerCapabilities({ resources: { listChanged: false } })
  server.setRequestHandler(ListResourcesRequestSchema, (req, extra) => listReports(services, principalOf(extra), req.params?.cursor))
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({ resourceTemplates: TEMPLATES }))
  server.setRequestHandler(ReadResourceRequestSchema, async (req, extra): Promise<ReadResourceResult> => {
    const { uri } = req.params
    const app = await readAppResource(uri)
    if (app) return app
    if (!uri.startsWith(SCHEME)) throw notFound(uri)
    const report = await readReport(services, principalOf(extra), uri).catch((e) => {
      services.log.error('resources/read failed', { uri, error: errorMessage(e) })
      throw rpcError(ErrorCode.InternalError, 'Reading the resource failed; the error was logged.')
    })
    if (report === null) throw notFound(uri)
    return { contents: [{ uri, mimeType: JSON_MIME, text: JSON.stringify(report) }] }
  })
}
