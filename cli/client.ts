// The service, as the command sees it: the official MCP SDK client over streamable HTTP with the key as a
// bearer token. Every way a call can go wrong ends here as a Failure carrying the exit code it means, so
// the flow in appaudit.ts never inspects an SDK error itself.
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js'
import { EXIT } from './output.ts'

export class Failure extends Error {
  constructor(
    readonly exitCode: typeof EXIT.usage | typeof EXIT.serviceFailed,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message)
  }
}

export const usage = (message: string) => new Failure(EXIT.usage, 'usage', message)

/**
 * Tool errors that the caller's flags or configuration caused: fixing them is editing the command line or
 * the key, and running again unchanged cannot help. plan_required is one: the key's plan lacks a tool the
 * flags ask for. Every other tool error (target_blocked, target_unreachable, scan_failed,
 * scanner_unavailable, audit_failed, allowance_exhausted, internal, ...) is the service or the target: 3.
 */
const USAGE_TOOL_ERRORS = new Set(['invalid_params', 'invalid_url', 'plan_required', 'not_found'])

/** A tool call's error answer, or a refused HTTP request, that is worth one more try after a pause. */
const RETRIES = 3
const MAX_PAUSE_S = 30

export interface CallOptions {
  timeoutMs: number
  onprogress?: (p: { progress: number; total?: number; message?: string }) => void
}

export interface Service {
  call<T = unknown>(name: string, args: Record<string, unknown>, opts: CallOptions): Promise<T>
  close(): Promise<void>
}

/** APPAUDIT_URL is the service's base URL; /api/mcp is appended unless it is already there. */
export function mcpUrlOf(base: string): URL {
  let url: URL
  try {
    url = new URL(base)
  } catch {
    throw usage(
      `the service URL ${JSON.stringify(base)} is not an absolute URL (set APPAUDIT_URL or --url, e.g. https://appaudit.example.com)`,
    )
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw usage(`the service URL must be http or https, not ${url.protocol}`)
  const path = url.pathname.replace(/\/+$/, '')
  url.pathname = path.endsWith('/api/mcp') ? path : `${path}/api/mcp`
  url.search = ''
  url.hash = ''
  return url
}

export interface ConnectOptions {
  version: string
  timeoutMs: number
  /** Told before each pause of a bounded retry, so a person knows why nothing moves. */
  onRetry(message: string): void
  sleep?: (ms: number) => Promise<void>
}

export async function connect(mcpUrl: URL, key: string, opts: ConnectOptions): Promise<Service> {
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)))
  // A transport starts once: each try of initialize gets a new client and transport.
  let client = new Client({ name: 'appaudit-cli', version: opts.version })
  await withRetries(
    async () => {
      client = new Client({ name: 'appaudit-cli', version: opts.version })
      const transport = new StreamableHTTPClientTransport(mcpUrl, { requestInit: { headers: { authorization: `Bearer ${key}` } } })
      return client.connect(transport, { timeout: opts.timeoutMs })
    },
    mcpUrl,
    'initialize',
    opts.onRetry,
    sleep,
  )

  return {
    async call<T>(name: string, args: Record<string, unknown>, call: CallOptions): Promise<T> {
      for (let attempt = 0; ; attempt++) {
        const result = await withRetries(
          () =>
            client.callTool({ name, arguments: args }, undefined, {
              timeout: call.timeoutMs,
              maxTotalTimeout: call.timeoutMs,
              onprogress: call.onprogress,
            }),
          mcpUrl,
          name,
          opts.onRetry,
          sleep,
        )
        const body = parseText(result, name)
        if (!result.isError) return body as T
        const error = (body as { error?: { code?: string; message?: string; retryAfter?: number } }).error ?? {}
        const code = error.code ?? 'internal'
        if (code === 'rate_limited' && attempt < RETRIES) {
          const pause = Math.min(MAX_PAUSE_S, Math.max(1, Number(error.retryAfter) || 5))
          opts.onRetry(`${name}: rate_limited, retrying in ${pause}s (${attempt + 1} of ${RETRIES})`)
          await sleep(pause * 1000)
          continue
        }
        const exit = USAGE_TOOL_ERRORS.has(code) ? EXIT.usage : EXIT.serviceFailed
        throw new Failure(exit, code, error.message ?? `${name} failed with ${code}`, error as Record<string, unknown>)
      }
    },
    async close() {
      await client.close().catch(() => {})
    },
  }
}

/** structuredContent when the answer has it; else the JSON of content[0].text (after its one-line summary, if any). */
function parseText(result: unknown, tool: string): unknown {
  const r = result as { content?: Array<{ type: string; text?: string }>; structuredContent?: unknown }
  if (typeof r.structuredContent === 'object' && r.structuredContent !== null) return r.structuredContent
  const first = r.content?.[0]
  try {
    if (first?.type === 'text' && typeof first.text === 'string') {
      return JSON.parse(first.text.startsWith('{') ? first.text : first.text.slice(first.text.indexOf('\n') + 1))
    }
  } catch {
    // Not JSON: answered below as a bad answer.
  }
  throw new Failure(EXIT.serviceFailed, 'bad_answer', `${tool} answered without a JSON payload in content[0].text`)
}

/** Runs one request; a 429 or 503 from the service is retried after a growing pause, a few times. */
async function withRetries<T>(
  run: () => Promise<T>,
  mcpUrl: URL,
  what: string,
  onRetry: (m: string) => void,
  sleep: (ms: number) => Promise<void>,
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await run()
    } catch (e) {
      const status = e instanceof StreamableHTTPError ? e.code : undefined
      if ((status === 429 || status === 503) && attempt < RETRIES) {
        const pause = Math.min(MAX_PAUSE_S, 5 * 2 ** attempt)
        onRetry(`${what}: the service answered ${status}, retrying in ${pause}s (${attempt + 1} of ${RETRIES})`)
        await sleep(pause * 1000)
        continue
      }
      throw failureOf(e, mcpUrl, what)
    }
  }
}

export function failureOf(e: unknown, mcpUrl: URL, what: string): Failure {
  if (e instanceof Failure) return e
  if (e instanceof StreamableHTTPError) {
    const status = e.code ?? 0
    if (status === 401) {
      return new Failure(EXIT.serviceFailed, 'unauthorized', `the service refused the key (401): check APPAUDIT_KEY or --key`)
    }
    if (status === 404)
      return new Failure(EXIT.serviceFailed, 'http_404', `no MCP endpoint at ${mcpUrl} (404): check APPAUDIT_URL or --url`)
    if (status === 429) return new Failure(EXIT.serviceFailed, 'rate_limited', `the service kept answering 429 to ${what}; try again later`)
    return new Failure(EXIT.serviceFailed, `http_${status}`, `the service answered ${status} to ${what}: ${clip(e.message)}`)
  }
  if (e instanceof McpError) {
    if (e.code === ErrorCode.RequestTimeout) {
      return new Failure(EXIT.serviceFailed, 'timeout', `${what} got no answer in time from ${mcpUrl.origin}`)
    }
    return new Failure(EXIT.serviceFailed, 'protocol_error', `${what}: ${clip(e.message)}`)
  }
  const message = e instanceof Error ? e.message : String(e)
  return new Failure(EXIT.serviceFailed, 'unreachable', `could not reach the service at ${mcpUrl}: ${clip(message)}`)
}

const clip = (s: string) => (s.length > 300 ? `${s.slice(0, 300)}…` : s)
