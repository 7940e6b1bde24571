// The MCP server: tools/list and tools/call over the tool registry. Tool errors become isError results
// with a JSON payload; only an unknown tool is a JSON-RPC error (-32602), as the MCP spec asks. A result is
// structuredContent (checked by clients against the tool's outputSchema) and, in content[0].text, the same
// JSON: alone for clients older than MCP 2025-06-18, after a one-line summary for newer ones (textCopy).
// Beside the tools: resources (resources.ts), prompts (prompts.ts), completions (completions.ts) and
// logging (logging.ts), each registered on the per-request Server below.
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv'
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js'
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  type CallToolResult,
  type LoggingLevel,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js'
import { Value } from '@sinclair/typebox/value'
import type { TSchema } from '@sinclair/typebox'
import pkg from '../../package.json' with { type: 'json' }
import type { Principal } from '../../shared/db/accounts.ts'
import { AppError, isAppError, errorMessage } from '../../shared/errors.ts'
import type { Services } from '../services.ts'
import { registerCompletions } from './completions.ts'
import { auditLine, registerLogging, toolLogger } from './logging.ts'
import { registerPrompts } from './prompts.ts'
import { registerResources, withReportLink } from './resources.ts'
import { planIncludes } from './tools/plans.ts'
import { unknownToolMessage } from './tools/names.ts'
import { findTool, TOOLS } from './tools/registry.ts'
import { TOOL_LIST } from './tools/listing.ts'
import { findSchemelessUrl } from './tools/schemas.ts'
import { argumentProblems } from './arg-errors.ts'
import { findUnusableUrl } from './url-hints.ts'
import type { Tool } from './tools/types.ts'

const SERVER_INFO = { name: 'appaudit', title: 'App Audit', version: pkg.version }

const INSTRUCTIONS =
  'Audits web apps. scan_app scans one page and returns a report (score, checks with evidence, advice). ' +
  'Every tool returns its JSON payload as structuredContent (matching its outputSchema) and in content[0].text ' +
  '(after a one-line summary from protocol 2025-06-18 on). Errors are results with isError: true ' +
  'and a payload {error: {code, message}}.'

export const json = (value: unknown): CallToolResult => ({ content: [{ type: 'text', text: JSON.stringify(value) }] })
/** An error carries no structuredContent: clients validate it against the outputSchema, which describes success. */
const toolError = (e: AppError): CallToolResult => ({ ...json(e.toJSON()), isError: true })

/** The first protocol version whose results carry structuredContent. */
const STRUCTURED_SINCE = '2025-06-18'

/** A one-line account of a result: its score and findings when it has them. */
export function summaryLine(tool: string, value: unknown): string {
  const v = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>
  const report = (typeof v.report === 'object' && v.report !== null ? v.report : v) as Record<string, unknown>
  const parts = [`${tool}:`]
  if (typeof v.status === 'string') parts.push(`status ${v.status};`)
  if (typeof report.score === 'number') parts.push(`score ${report.score}/100 (${String(report.grade)});`)
  const counts = report.summary as Record<string, unknown> | undefined
  if (counts && typeof counts.fail === 'number') parts.push(`${counts.fail} fail, ${counts.warn} warn, ${counts.pass} pass;`)
  if (Array.isArray(v.items)) parts.push(`${v.items.length} items;`)
  parts.push('the JSON follows (the same as structuredContent).')
  return parts.join(' ')
}

/**
 * content[0].text of a successful result. MCP 2025-06-18 keeps the serialised JSON in a text block for
 * clients that read no structuredContent, and its clients declare no capability that says they do; the one
 * signal is the protocol version, which the SDK client sends with every request (MCP-Protocol-Version). So:
 * the bare JSON for a client of an older version (or none sent), a one-line summary and the JSON for a newer
 * one, whose hosts may show either copy to the model (docs/tools.md).
 */
function textCopy(tool: string, value: unknown, json: string, protocolVersion: string | undefined): string {
  if (!protocolVersion || protocolVersion < STRUCTURED_SINCE) return json
  return `${summaryLine(tool, value)}\n${json}`
}

/** A successful result. structuredContent is parsed back from the JSON, so both copies are the same JSON (dates as strings). */
function structured(tool: string, value: unknown, protocolVersion: string | undefined): CallToolResult {
  const json = JSON.stringify(value)
  const structuredContent = JSON.parse(json)
  return { content: [{ type: 'text', text: textCopy(tool, structuredContent, json, protocolVersion) }], structuredContent }
}

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>

/** A JSON-RPC error as the spec words it. (McpError prefixes its message with "MCP error <code>:".) */
const protocolError = (code: ErrorCode, message: string) => Object.assign(new Error(message), { code })

/** The first `n` errors TypeBox finds, read lazily: its iterator is never run past them. */
function firstErrors(schema: TSchema, value: unknown, n: number) {
  const found = []
  for (const e of Value.Errors(schema, value)) {
    found.push(e)
    if (found.length >= n) break
  }
  return found
}

const TOOL_NAMES = TOOLS.map((t) => t.name)

/** One JSON Schema validator for every per-request Server: the SDK's default builds a new Ajv each time. */
const VALIDATOR = new AjvJsonSchemaValidator()

/** The session a request continues, if any, and the logging level it set (logging.ts). */
export interface SessionContext {
  sessionId: string | null
  logLevel: LoggingLevel | null
}

export function createMcpServer(services: Services, session: SessionContext = { sessionId: null, logLevel: null }): Server {
  const server = new Server(SERVER_INFO, {
    capabilities: { tools: { listChanged: false }, logging: {} },
    instructions: INSTRUCTIONS,
    jsonSchemaValidator: VALIDATOR,
  })
  server.setRequestHandler(ListToolsRequestSchema, async () => TOOL_LIST)
  // The report view (an MCP App, ui://) and every report of the account (appaudit://).
  registerResources(server, services)
  registerPrompts(server, `${services.config.baseUrl}/docs/ci`)
  registerCompletions(server, services)
  registerLogging(server, services.infra.kv, session.sessionId, services.config.MCP_SESSION_TTL_S)
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const tool = findTool(req.params.name)
    if (!tool) throw protocolError(ErrorCode.InvalidParams, unknownToolMessage(req.params.name, TOOL_NAMES))
    const principal = extra.authInfo?.extra?.principal as Principal | undefined
    if (!principal) throw protocolError(ErrorCode.InternalError, 'Unauthenticated call reached a tool')
    return callTool(tool, req.params.arguments ?? {}, principal, services, extra, req.params._meta?.progressToken, session.logLevel)
  })
  return server
}

async function callTool(
  tool: Tool,
  args: unknown,
  principal: Principal,
  services: Services,
  extra: Extra,
  progressToken: string | number | undefined,
  logLevel: LoggingLevel | null,
): Promise<CallToolResult> {
  const plan = principal.account.plan
  if (!planIncludes(plan, tool.plan)) {
    return toolError(
      new AppError('plan_required', `${tool.name} needs the ${tool.plan} plan or higher; this account is on ${plan}.`, {
        requiredPlan: tool.plan,
        currentPlan: plan,
      }),
    )
  }
  if (!tool.run) return toolError(new AppError('not_implemented', `${tool.name} is not available on this server yet.`))
  if (!Value.Check(tool.input, args)) {
    const details = argumentProblems(tool.input, args)
    const said = details.slice(0, 5).map((d) => `${d.path} ${d.message}`)
    return toolError(new AppError('invalid_params', `Invalid arguments for ${tool.name}: ${said.join('; ')}`, { details }))
  }
  // A URL without its scheme is refused with the URL to send: guessing https:// could scan the wrong site.
  const schemeless = findSchemelessUrl(args)
  if (schemeless) {
    const { path, value, suggestion } = schemeless
    const other = suggestion.startsWith('https:')
      ? `or ${suggestion.replace(/^https:/, 'http:')} for a site without HTTPS`
      : `or ${suggestion.replace(/^http:/, 'https:')} if it serves HTTPS`
    return toolError(
      new AppError('invalid_url', `${JSON.stringify(value)} has no scheme: send ${suggestion} (${other}). Nothing was started.`, {
        details: [{ path, message: `must start with https:// or http://; did you mean ${suggestion}?` }],
        suggestion,
      }),
    )
  }
  const unusable = findUnusableUrl(args)
  if (unusable) {
    const { path, message, suggestion } = unusable
    const detail = suggestion
      ? `must be an http:// or https:// URL; did you mean ${suggestion}?`
      : 'must be a whole http:// or https:// URL'
    return toolError(new AppError('invalid_url', message, { details: [{ path, message: detail }], ...(suggestion ? { suggestion } : {}) }))
  }
  // A phase of the work is a progress notification when asked for, and an info log message when the session asked for logs.
  const log = toolLogger(extra, logLevel, tool.name)
  const progress = async (value: number, total: number, message: string) => {
    await log('info', { phase: message, progress: value, total })
    if (progressToken === undefined) return
    await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress: value, total, message } })
  }
  try {
    const result = await tool.run(args, { principal, services, progress, signal: extra.signal, tools: TOOLS })
    const line = auditLine(result)
    if (line) await log('info', line)
    const header = extra.requestInfo?.headers['mcp-protocol-version']
    const version = Array.isArray(header) ? header[0] : header
    const answer = withReportLink(tool.name, structured(tool.name, result, version), version)
    // Clients reject a result that does not match the declared schema: make such drift visible on our side too.
    if (!Value.Check(tool.output, answer.structuredContent)) {
      const errors = firstErrors(tool.output, answer.structuredContent, 5).map((x) => `${x.path} ${x.message}`)
      services.log.error('tool result does not match its outputSchema', { tool: tool.name, errors })
    }
    return answer
  } catch (e) {
    if (isAppError(e)) return toolError(e)
    services.log.error('tool failed', { tool: tool.name, error: errorMessage(e), stack: (e as Error).stack })
    return toolError(new AppError('internal', 'The tool failed unexpectedly; the error was logged.'))
  }
}
