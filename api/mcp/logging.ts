// MCP logging. logging/setLevel is kept per session in the shared store (any replica serves the session's
// next request), and is the client's opt-in: once a session has set info or a lower level, the calls of
// LOGGING_TOOLS answer as an SSE stream carrying notifications/message at info level (the scan's phases,
// an audit's state) ahead of the result. Without a level, or without a session, nothing is logged and answers stay
// plain JSON, as they are for every client that never asked.
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js'
import {
  type LoggingLevel,
  LoggingLevelSchema,
  type ServerNotification,
  type ServerRequest,
  SetLevelRequestSchema,
} from '@modelcontextprotocol/sdk/types.js'
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { KeyValue } from '../../shared/infra/types.ts'
import { hasMethod } from './envelope.ts'

/** The tools that log while they work: their calls are worth a stream when the session asked for logs. */
export const LOGGING_TOOLS = new Set(['scan_app', 'check_data_exposure', 'audit_app', 'get_audit'])

const SEVERITY = new Map(LoggingLevelSchema.options.map((level, i) => [level, i]))
const levelKey = (sessionId: string) => `mcp:log-level:${sessionId}`

/** The level the session set with logging/setLevel, or null (never set, unknown session, store out of reach). */
export async function sessionLogLevel(kv: KeyValue, sessionId: string, ttlSeconds: number): Promise<LoggingLevel | null> {
  const raw = await kv.get(levelKey(sessionId)).catch(() => null)
  if (raw === null) return null
  // The level lives as long as the session is used.
  kv.touch(levelKey(sessionId), ttlSeconds).catch(() => {})
  const parsed = LoggingLevelSchema.safeParse(raw)
  return parsed.success ? parsed.data : null
}

/** A tools/call of a logging tool among the request's messages. */
export const callsLoggingTool = (messages: unknown[]) =>
  messages.some((m) => hasMethod(m, 'tools/call') && LOGGING_TOOLS.has(String((m as { params?: { name?: unknown } }).params?.name)))

/** Whether a message of `level` passes the session's level. */
export const passes = (level: LoggingLevel, set: LoggingLevel | null) =>
  set !== null && (SEVERITY.get(level) ?? 0) >= (SEVERITY.get(set) ?? 0)

/**
 * Answers logging/setLevel: stores the level for the session the request continues (the session gate has
 * checked it is this account's). A request without a session has nothing to keep it for and is answered {}.
 */
export function registerLogging(server: Server, kv: KeyValue, sessionId: string | null, ttlSeconds: number): void {
  server.setRequestHandler(SetLevelRequestSchema, async (req) => {
    if (sessionId) await kv.set(levelKey(sessionId), req.params.level, ttlSeconds)
    return {}
  })
}

type Extra = RequestHandlerExtra<ServerNotification, ServerNotification> | RequestHandlerExtra<ServerRequest, ServerNotification>

/** A function that sends one log message from `logger` when it passes the session's level; never throws. */
export function toolLogger(extra: Extra, set: LoggingLevel | null, logger: string) {
  return async (level: LoggingLevel, data: unknown) => {
    if (!passes(level, set)) return
    await extra.sendNotification({ method: 'notifications/message', params: { level, logger, data } }).catch(() => {})
  }
}

/** An audit's state in one line, for audit_app and get_audit: `aud_x running: 3 of 12 pages scanned`. */
export function auditLine(result: unknown): string | null {
  const r = (typeof result === 'object' && result !== null ? result : {}) as Record<string, unknown>
  if (typeof r.auditId !== 'string' || typeof r.status !== 'string') return null
  const p = (r.progress ?? {}) as Record<string, unknown>
  const pages = typeof p.pagesScanned === 'number' ? `: ${p.pagesScanned} of ${Number(p.pagesDiscovered ?? 0)} pages scanned` : ''
  return `${r.auditId} ${r.status}${pages}`
}
