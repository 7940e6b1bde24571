// The MCP server: tools/list and tools/call over the tool registry. Tool errors become isError results
// with a JSON payload; only an unknown tool is a JSON-RPC error (-32602), as the MCP spec asks.
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv'
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js'
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  type CallToolResult,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js'
import { Value } from '@sinclair/typebox/value'
import pkg from '../../package.json' with { type: 'json' }
import type { Principal } from '../../shared/db/accounts.ts'
import { AppError, isAppError } from '../../shared/errors.ts'
import type { Services } from '../services.ts'
import { planIncludes } from './tools/plans.ts'
import { findTool, TOOLS } from './tools/registry.ts'
import type { Tool } from './tools/types.ts'

const SERVER_INFO = { name: 'appaudit', title: 'App Audit', version: pkg.version }

const INSTRUCTIONS =
  'Audits web apps. scan_app scans one page and returns a report (score, checks with evidence, advice). ' +
  'Every tool returns its JSON payload as a string in content[0].text. Errors are results with isError: true ' +
  'and a payload {error: {code, message}}.'

/** tools/list is the same for every caller: computed once, as plain JSON (TypeBox's symbols dropped). */
const TOOL_LIST = {
  tools: TOOLS.map((t) => ({
    name: t.name,
    title: t.annotations.title,
    description: t.plan === 'free' ? t.description : `${t.description} (${t.plan === 'launch' ? 'Launch and Scale' : 'Scale'} plans.)`,
    inputSchema: JSON.parse(JSON.stringify(t.input)),
    annotations: t.annotations,
  })),
}

/** The same, serialised once. */
export const TOOL_LIST_JSON = JSON.stringify(TOOL_LIST)

export const json = (value: unknown): CallToolResult => ({ content: [{ type: 'text', text: JSON.stringify(value) }] })
const toolError = (e: AppError): CallToolResult => ({ ...json(e.toJSON()), isError: true })

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>

/** A JSON-RPC error as the spec words it. (McpError prefixes its message with "MCP error <code>:".) */
const protocolError = (code: ErrorCode, message: string) => Object.assign(new Error(message), { code })

export function validationErrors(tool: Tool, args: unknown) {
  return [...Value.Errors(tool.input, args)].slice(0, 20).map((e) => ({ path: e.path || '/', message: e.message }))
}

/** One JSON Schema validator for every per-request Server: the SDK's default builds a new Ajv each time. */
const VALIDATOR = new AjvJsonSchemaValidator()

export function createMcpServer(services: Services): Server {
  const server = new Server(SERVER_INFO, {
    capabilities: { tools: { listChanged: false } },
    instructions: INSTRUCTIONS,
    jsonSchemaValidator: VALIDATOR,
  })
  server.setRequestHandler(ListToolsRequestSchema, async () => TOOL_LIST)
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const tool = findTool(req.params.name)
    if (!tool) throw protocolError(ErrorCode.InvalidParams, `Unknown tool: ${req.params.name}`)
    const principal = extra.authInfo?.extra?.principal as Principal | undefined
    if (!principal) throw protocolError(ErrorCode.InternalError, 'Unauthenticated call reached a tool')
    return callTool(tool, req.params.arguments ?? {}, principal, services, extra, req.params._meta?.progressToken)
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
    const details = validationErrors(tool, args)
    return toolError(
      new AppError('invalid_params', `Invalid arguments for ${tool.name}: ${details.map((d) => `${d.path} ${d.message}`).join('; ')}`, {
        details,
      }),
    )
  }
  const progress = async (value: number, total: number, message: string) => {
    if (progressToken === undefined) return
    await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress: value, total, message } })
  }
  try {
    const result = await tool.run(args, { principal, services, progress, signal: extra.signal, tools: TOOLS })
    return json(result)
  } catch (e) {
    if (isAppError(e)) return toolError(e)
    services.log.error('tool failed', { tool: tool.name, error: (e as Error).message, stack: (e as Error).stack })
    return toolError(new AppError('internal', 'The tool failed unexpectedly; the error was logged.'))
  }
}
