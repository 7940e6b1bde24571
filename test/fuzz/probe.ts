// Turns a RequestSpec into a real request over loopback, sends it with a deadline, and says what is wrong
// with the answer: no answer in time, a 5xx other than 503 + Retry-After, or internals in the body.
// Also the event-loop monitor the fuzz tests measure blocking with.
import { connect } from 'node:net'
import { join } from 'node:path'
import type { BodySpec, QuerySpec, RawSpec, RequestSpec } from './arbitraries.ts'
import { mainThreadCpuMs } from '../harness/machine.ts'

const ROOT = join(import.meta.dir, '..', '..')

/** What placeholders stand for in this run. */
export interface Env {
  /** http://127.0.0.1:PORT */
  origin: string
  port: number
  baseHost: string
  key: string
  session: string
  client: string
}

export interface Built {
  label: string
  /** The route, method and body kind: what the event-loop monitor names. */
  summary: string
  url: string
  method: string
  headers: Array<[string, string]>
  body: Uint8Array<ArrayBuffer> | null
  chunk: number | null
  /** Everything the request said, as text: a pattern found here is an echo, not a leak. */
  sent: string
  /** A one-line reproduction, long parts cut. */
  repro: string
}

export interface Answer {
  status: number
  headers: Headers | null
  body: string
  ms: number
  /** Set when no complete answer arrived (network error, deadline). */
  error: string | null
}

const fill = (s: string, env: Env) =>
  s
    .replaceAll('{port}', String(env.port))
    .replaceAll('{basehost}', env.baseHost)
    .replaceAll('{key}', env.key)
    .replaceAll('{session}', env.session)
    .replaceAll('{client}', env.client)

/** xorshift32: the same bytes for the same seed, fast enough for MBs. */
function pseudoRandomBytes(size: number, seed: number): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(size)
  let x = seed | 0 || 0x9e3779b9
  const words = new Uint32Array(out.buffer, 0, size >>> 2)
  for (let i = 0; i < words.length; i++) {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    words[i] = x >>> 0
  }
  for (let i = words.length * 4; i < size; i++) out[i] = (i * 31 + seed) & 0xff
  return out
}

function deepJson(depth: number, style: 'array' | 'object' | 'rpc', closed: boolean): string {
  const open = style === 'array' ? '[' : '{"a":'
  const close = style === 'array' ? ']' : '}'
  const core = `${open.repeat(depth)}1${closed ? close.repeat(depth) : ''}`
  if (style !== 'rpc') return core
  const tail = closed ? '}}}' : ''
  return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"explain_check","arguments":{"checkId":${core}${tail}`
}

function bodyText(spec: BodySpec, env: Env): string | Uint8Array<ArrayBuffer> {
  switch (spec.kind) {
    case 'text':
      return fill(spec.text, env)
    case 'bytes':
      return pseudoRandomBytes(spec.size, spec.seed)
    case 'deep':
      return deepJson(spec.depth, spec.style, spec.closed)
    case 'form': {
      const parts = Array.from({ length: spec.keys }, (_, i) => `f${i}=${i}`)
      for (let i = 0; i < spec.repeat; i++) parts.push(`r=${i}`)
      return spec.prefix + parts.join('&')
    }
    case 'wide': {
      const inner =
        spec.where === 'array'
          ? `[${Array.from({ length: spec.keys }, (_, i) => i).join(',')}]`
          : `{${Array.from({ length: spec.keys }, (_, i) => `"k${i}":${i}`).join(',')}}`
      if (!spec.rpc) return inner
      if (spec.where === 'capabilities')
        return `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","clientInfo":{"name":"f","version":"1"},"capabilities":{"experimental":${inner}}}}`
      if (spec.where === 'arguments' || spec.where === 'array')
        return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"scan_app","arguments":{"url":${inner}}}}`
      return `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":${inner}}`
    }
    case 'padded': {
      const head = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"explain_check","arguments":{"checkId":"'
      const tail = '"}}}'
      return head + 'x'.repeat(Math.max(0, spec.size - head.length - tail.length)) + tail
    }
  }
}

/** encodeURIComponent, except that a lone surrogate (which it refuses) is sent as its raw UTF-8-style bytes, %ED%A0%80. */
function encodeLoose(s: string): string {
  let out = ''
  for (const ch of s) {
    const c = ch.charCodeAt(0)
    out += ch.length === 1 && c >= 0xd800 && c <= 0xdfff ? '%ED%A0%80' : encodeURIComponent(ch)
  }
  return out
}

function queryString(q: QuerySpec, env: Env): string {
  const parts = q.params.map(([k, v]) => `${encodeLoose(fill(k, env))}=${encodeLoose(fill(v, env))}`)
  for (let i = 0; i < q.extraKeys; i++) parts.push(`k${i}=${i}`)
  for (let i = 0; i < q.repeat; i++) parts.push(`r=${i}`)
  if (q.raw) parts.push(q.raw)
  return parts.length ? `?${parts.join('&')}` : ''
}

const cut = (s: string, n = 160) => (s.length > n ? `${s.slice(0, n)}…(${s.length} chars)` : s)

function describeBody(spec: BodySpec | null, size: number): string {
  if (!spec) return ''
  if (spec.kind === 'text') return ` --data-raw ${JSON.stringify(cut(spec.text))}`
  return ` --data-binary <${JSON.stringify(spec)}, ${size} bytes>`
}

/** At most this many chunks per streamed body: smaller chunks of a large body would measure the client, not the server. */
const MAX_CHUNKS = 4_096

export function build(spec: RequestSpec, env: Env): Built {
  const path = fill(spec.path, env)
  const url = env.origin + (path.startsWith('/') ? '' : '/') + path + (spec.query ? queryString(spec.query, env) : '')
  const headers = spec.headers.map(([n, v]): [string, string] => [n, fill(v, env)])
  const raw = spec.body ? bodyText(spec.body, env) : null
  const body = raw === null ? null : typeof raw === 'string' ? new TextEncoder().encode(raw) : raw
  const textBody = typeof raw === 'string' && raw.length <= 4_000_000 ? raw : ''
  const chunk = spec.chunk === null || !body ? null : Math.max(spec.chunk, Math.ceil(body.byteLength / MAX_CHUNKS))
  const repro =
    `curl -X ${cut(spec.method, 20)} ${JSON.stringify(cut(url, 200))}` +
    headers.map(([n, v]) => ` -H ${JSON.stringify(cut(`${n}: ${v}`, 120))}`).join('') +
    describeBody(spec.body, body?.byteLength ?? 0) +
    (chunk !== null ? ` (chunked, ${chunk}-byte chunks, no Content-Length)` : '')
  return {
    label: `${spec.method} ${spec.route}`,
    summary: `${spec.method} ${spec.route}${spec.body ? ` body ${JSON.stringify(spec.body).slice(0, 120)}` : ''}${chunk !== null ? ` in ${chunk}-byte chunks` : ''}`,
    url,
    method: spec.method,
    headers,
    body,
    chunk,
    sent: [url, ...headers.map(([n, v]) => `${n}: ${v}`), textBody].join('\n'),
    repro,
  }
}

function streamOf(body: Uint8Array<ArrayBuffer>, chunk: number): ReadableStream<Uint8Array<ArrayBuffer>> {
  let offset = 0
  return new ReadableStream({
    pull(c) {
      if (offset >= body.byteLength) return c.close()
      c.enqueue(body.subarray(offset, offset + chunk))
      offset += chunk
    },
  })
}

/** Body bytes kept for the checks; an answer longer than this is cut (and still counts as answered). */
const READ_CAP = 8 * 1024 * 1024

async function readBody(res: Response, firstChunkOnly: boolean): Promise<string> {
  if (!res.body) return ''
  const reader = res.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  try {
    for (let i = 0; i < 1_000_000; i++) {
      const { done, value } = await reader.read()
      if (done) break
      chunks.push(value)
      size += value.byteLength
      if (firstChunkOnly || size >= READ_CAP) break
    }
  } finally {
    await reader.cancel().catch(() => {})
  }
  return Buffer.concat(chunks).toString('utf8')
}

/** Sends one request to 127.0.0.1 only; redirects are never followed. */
export async function send(b: Built, deadlineMs: number): Promise<Answer> {
  if (new URL(b.url).hostname !== '127.0.0.1') throw new Error(`refusing to send to ${b.url}: loopback only`)
  const t0 = performance.now()
  const init: RequestInit & { duplex?: 'half' } = {
    method: b.method,
    headers: b.headers,
    redirect: 'manual',
    signal: AbortSignal.timeout(deadlineMs),
  }
  if (b.body) {
    if (b.chunk !== null) {
      init.body = streamOf(b.body, b.chunk)
      init.duplex = 'half'
    } else {
      init.body = b.body
    }
  }
  try {
    const res = await fetch(b.url, init)
    // An open event stream (GET) never ends by itself: its first bytes are the answer.
    const stream = b.method === 'GET' && (res.headers.get('content-type') ?? '').includes('text/event-stream')
    const body = await readBody(res, stream)
    return { status: res.status, headers: res.headers, body, ms: performance.now() - t0, error: null }
  } catch (e) {
    const err = e as Error
    return { status: 0, headers: null, body: '', ms: performance.now() - t0, error: `${err.name}: ${err.message}` }
  }
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** What a body must never show: stack frames and paths of this machine. */
const LEAKS: Array<[string, RegExp]> = [
  ['a stack frame', /\bat (?:async )?[^\s()]+ \((?:\/|file:|native|bun:|node:)[^)]*\)/],
  ['a stack frame', /^\s*at \S.*:\d+:\d+\)?\s*$/m],
  ['the repository path', new RegExp(escapeRe(ROOT))],
  ['an absolute path under /work/', /\/work\//],
  ['a node_modules path', /node_modules/],
  ['a file: URL', /file:\/\/\//],
  ['a temporary directory of the service', /\/tmp\/appaudit-/],
  ['a source file name', /\b[\w-]+\.(?:ts|js|mjs):\d+/],
]

/** Everything wrong with an answer; empty when it is fine. */
export function problems(b: Pick<Built, 'sent'>, a: Answer): string[] {
  if (a.error) return [`no complete answer (${a.error}, after ${Math.round(a.ms)} ms)`]
  const out: string[] = []
  if (a.status >= 500 && !(a.status === 503 && a.headers?.get('retry-after'))) {
    out.push(`status ${a.status}${a.status === 503 ? ' without Retry-After' : ''}`)
  }
  for (const [what, re] of LEAKS) {
    const m = re.exec(a.body)
    if (m && !re.test(b.sent)) out.push(`the body shows ${what}: ${JSON.stringify(cut(m[0], 120))}`)
  }
  return out
}

export function report(b: Pick<Built, 'label' | 'repro'>, a: Answer, found: string[]): string {
  const ct = a.headers?.get('content-type') ?? ''
  return [
    `${b.label}: ${found.join('; ')}`,
    `  request:  ${b.repro}`,
    `  answer:   ${a.error ?? `${a.status} ${ct}`} in ${Math.round(a.ms)} ms; body ${JSON.stringify(cut(a.body, 400))}`,
  ].join('\n')
}

/**
 * Gaps between ticks of a 10 ms interval, counted only while requests are in flight (resume .. pause), so
 * the test's own work (generating and building requests, checking answers) is not counted: the service
 * runs in this process, and a long gap here is the service blocking the event loop.
 *
 * Each gap is measured twice: on the wall clock, and as the time the event loop's thread spent on a CPU
 * during it. On a loaded machine the wall gap also holds the time the thread waited for a CPU (an idle
 * Bun process on a busy 2-core box sees 60-100 ms wall gaps), which says nothing about the service; the
 * on-CPU time is the work the service did without returning to the loop, whatever the load. A stall is a
 * gap whose on-CPU time reaches the limit (the wall gap where /proc does not give thread times).
 */
export class LoopMonitor {
  private timer: ReturnType<typeof setInterval> | null = null
  private last = 0
  private lastCpu: number | null = null
  private active = false
  private current = ''
  /** The longest gap on the wall clock, load included. */
  maxGapMs = 0
  /** The longest gap in on-CPU time of the event loop's thread: the service's own blocking. */
  maxBusyMs = 0
  /** The requests in flight at the longest on-CPU gap. */
  maxBusyDuring = ''
  /** Gaps over the limit, with the requests in flight when they happened. */
  readonly stalls: Array<{ busyMs: number; gapMs: number; during: string }> = []

  constructor(
    private readonly everyMs = 10,
    private readonly limitMs = 50,
  ) {}

  start() {
    this.timer = setInterval(() => this.tick(), this.everyMs)
  }

  stop() {
    if (this.timer) clearInterval(this.timer)
    this.timer = null
    this.active = false
  }

  resume(during: string) {
    this.current = during
    this.last = performance.now()
    this.lastCpu = mainThreadCpuMs()
    this.active = true
  }

  pause() {
    if (this.active) this.tick()
    this.active = false
  }

  private tick() {
    const now = performance.now()
    const cpu = mainThreadCpuMs()
    if (this.active) {
      const gap = now - this.last
      const busy = cpu !== null && this.lastCpu !== null ? Math.min(gap, cpu - this.lastCpu) : gap
      this.maxGapMs = Math.max(this.maxGapMs, gap)
      if (busy > this.maxBusyMs) {
        this.maxBusyMs = busy
        this.maxBusyDuring = this.current
      }
      if (busy >= this.limitMs && this.stalls.length < 50) {
        this.stalls.push({ busyMs: Math.round(busy), gapMs: Math.round(gap), during: this.current })
      }
    }
    this.last = now
    this.lastCpu = cpu
  }
}

/**
 * A request written by hand on a TCP socket, for what fetch would normalise away (dot segments, raw bytes,
 * absolute-form targets). Resolves with the status line's code, the rest of the answer, or an error.
 */
export function rawRequest(port: number, bytes: Uint8Array, halfClose: boolean, deadlineMs: number): Promise<Answer> {
  const t0 = performance.now()
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    let settled = false
    const finish = (error: string | null) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      socket.destroy()
      const text = Buffer.concat(chunks).toString('latin1')
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(text)
      const split = text.indexOf('\r\n\r\n')
      const headers = new Headers()
      for (const line of text
        .slice(0, split < 0 ? text.length : split)
        .split('\r\n')
        .slice(1)) {
        const i = line.indexOf(':')
        if (i > 0) {
          try {
            headers.append(line.slice(0, i).trim(), line.slice(i + 1).trim())
          } catch {}
        }
      }
      const ms = performance.now() - t0
      if (!m) resolve({ status: 0, headers: null, body: text, ms, error: error ?? 'the connection closed without a status line' })
      else resolve({ status: Number(m[1]), headers, body: split < 0 ? '' : text.slice(split + 4), ms, error: null })
    }
    const timer = setTimeout(() => finish(`no answer within ${deadlineMs} ms`), deadlineMs)
    const socket = connect({ host: '127.0.0.1', port }, () => {
      socket.write(bytes)
      if (halfClose) socket.end()
    })
    socket.on('data', (d: Buffer) => {
      chunks.push(d)
      // Connection: close is sent, but stop reading past a few MB anyway.
      if (chunks.reduce((n, c) => n + c.length, 0) > READ_CAP) finish(null)
    })
    socket.on('end', () => finish(null))
    socket.on('close', () => finish(null))
    socket.on('error', (e) => finish(`${e.name}: ${e.message}`))
  })
}

export interface BuiltRaw extends Omit<Built, 'url' | 'headers' | 'body' | 'chunk' | 'summary'> {
  bytes: Uint8Array
  /** The framing is valid HTTP/1.1: an answer is due. Otherwise closing the connection is an answer too. */
  wellFormed: boolean
  /** The body is shorter than declared: the write side is closed after it. */
  halfClose: boolean
}

export function buildRaw(spec: RawSpec, env: Env): BuiltRaw {
  const target = fill(spec.target, env)
  const lines = [`${spec.method} ${target} HTTP/1.1`, `Host: 127.0.0.1:${env.port}`, 'Connection: close']
  for (const [n, v] of spec.headers) lines.push(`${n}: ${fill(v, env)}`)
  const body = Buffer.from(spec.body, 'utf8')
  let payload = ''
  switch (spec.framing) {
    case 'none':
      break
    case 'length':
      lines.push(`Content-Length: ${body.length}`)
      payload = body.toString('latin1')
      break
    case 'short-length':
      lines.push(`Content-Length: ${body.length + 10}`)
      payload = body.toString('latin1')
      break
    case 'chunked':
      lines.push('Transfer-Encoding: chunked')
      payload = `${body.length ? `${body.length.toString(16)}\r\n${body.toString('latin1')}\r\n` : ''}0\r\n\r\n`
      break
    case 'bad-chunk':
      lines.push('Transfer-Encoding: chunked')
      payload = `zz\r\n${body.toString('latin1')}\r\n0\r\n\r\n`
      break
    case 'length-and-chunked':
      lines.push(`Content-Length: ${body.length}`, 'Transfer-Encoding: chunked')
      payload = `${body.length.toString(16)}\r\n${body.toString('latin1')}\r\n0\r\n\r\n`
      break
  }
  const text = `${lines.join('\r\n')}\r\n\r\n${payload}`
  return {
    label: `raw ${cut(spec.method, 20)} ${cut(target, 60)}`,
    method: spec.method,
    bytes: Buffer.from(text, 'latin1'),
    wellFormed: spec.framing === 'none' || spec.framing === 'length' || spec.framing === 'chunked',
    halfClose: spec.framing === 'short-length',
    sent: text,
    repro: `printf %s ${JSON.stringify(cut(text, 400))} | nc 127.0.0.1 ${env.port}`,
  }
}
