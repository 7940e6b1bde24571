// The soak's users: one agent per account, each an official MCP SDK client on whichever api is up, calling
// scan_app, audit_app, start_directory_run and reading tools at random intervals, following what it started
// to its end, and opening some audits' live viewers. Every call, wait and loop is bounded; an api that dies
// under a call is a transport failure, recorded, and the next call connects to an api that is up.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { connectClient, payload } from '../../test/harness/client.ts'
import { CLOSE_ENDED } from '../../shared/protocol/viewer-close.ts'
import { errorMessage } from '../../shared/errors.ts'
import { withTimeout } from '../lib/stats.ts'

export type Outcome = { kind: 'ok'; body: any } | { kind: 'error'; code: string; body: any } | { kind: 'transport'; message: string }

export interface ScanCall {
  account: string
  t0: number
  t1: number
  outcome: 'completed' | 'error' | 'transport'
  code?: string
  scanId?: string
}

export interface AuditCall {
  account: string
  t0: number
  /** started: audit_app answered an auditId; refused: an error code; transport: no answer. */
  outcome: 'started' | 'refused' | 'transport'
  code?: string
  auditId?: string
  /** The last status get_audit answered. */
  final?: string
  viewer?: ViewerResult
}

export interface RunCall {
  account: string
  mode: 'scan' | 'audit'
  outcome: 'started' | 'refused' | 'transport'
  code?: string
  runId?: string
  final?: string
}

export interface ViewerResult {
  frames: number
  messages: number
  /** ended: closed with "This crawl has ended"; else the close code, or "timeout" / "error". */
  end: string
}

export interface LoadLog {
  scans: ScanCall[]
  audits: AuditCall[]
  runs: RunCall[]
  reads: { ok: number; error: number; transport: number }
  transportSamples: string[]
}

export const newLoadLog = (): LoadLog => ({
  scans: [],
  audits: [],
  runs: [],
  reads: { ok: 0, error: 0, transport: 0 },
  transportSamples: [],
})

/** One account's MCP client, connected lazily to an api that is up and dropped when a call finds it gone. */
export class Agent {
  private client: Promise<Client> | null = null
  inFlight = 0

  constructor(
    readonly name: string,
    readonly plan: 'free' | 'launch' | 'scale',
    private key: string,
    private pickApi: () => string | null,
    private log: LoadLog,
  ) {}

  private connect(): Promise<Client> {
    if (!this.client) {
      const url = this.pickApi()
      const c = url ? connectClient(url, this.key) : Promise.reject(new Error('no api is up'))
      this.client = withTimeout(c, 30_000, 'connect')
      this.client.catch(() => (this.client = null))
    }
    return this.client
  }

  async call(name: string, args: Record<string, unknown>, timeoutMs = 60_000): Promise<Outcome> {
    let current: Promise<Client> | null = null
    try {
      current = this.connect()
      const c = await current
      const r = await c.callTool({ name, arguments: args }, undefined, { timeout: timeoutMs })
      const body = payload(r)
      return r.isError ? { kind: 'error', code: String(body?.error?.code ?? 'unknown'), body } : { kind: 'ok', body }
    } catch (e) {
      // The api under this client died, lost its session (a Redis restart) or did not answer: connect anew.
      if (current && this.client === current) {
        this.client = null
        current.then((c) => setTimeout(() => c.close().catch(() => {}), 120_000).unref()).catch(() => {})
      }
      const message = errorMessage(e).slice(0, 160)
      if (this.log.transportSamples.length < 40) this.log.transportSamples.push(`${name}: ${message}`)
      return { kind: 'transport', message }
    }
  }
}

export interface Workload {
  scanSites: string[]
  auditSites: string[]
  /** Until when new work is started. */
  loadUntil: number
  /** Until when what was started is followed. */
  followUntil: number
  gapMs: [number, number]
  /** The base URL of an api that is up, for viewers. */
  apiBase(): string | null
}

const rand = (a: number, b: number) => a + Math.random() * (b - a)
const pick = <T>(xs: T[]): T => xs[Math.floor(Math.random() * xs.length)]!

export async function scanOnce(agent: Agent, w: Workload, log: LoadLog): Promise<void> {
  const t0 = Date.now()
  const r = await agent.call('scan_app', { url: pick(w.scanSites) }, 120_000)
  const rec: ScanCall = { account: agent.name, t0, t1: Date.now(), outcome: r.kind === 'ok' ? 'completed' : r.kind }
  if (r.kind === 'ok') rec.scanId = r.body.id
  if (r.kind === 'error') {
    rec.code = r.code
    rec.scanId = r.body?.error?.scanId
  }
  log.scans.push(rec)
}

/** Polls a tool until done() says the answer is final, or followUntil; the last status seen. */
async function follow(agent: Agent, w: Workload, tool: string, args: Record<string, unknown>, done: (b: any) => boolean) {
  let last = 'unknown'
  for (let i = 0; i < 10_000 && Date.now() < w.followUntil; i++) {
    await Bun.sleep(5_000)
    const r = await agent.call(tool, args)
    if (r.kind !== 'ok') continue
    last = String(r.body.status)
    if (done(r.body)) break
  }
  return last
}

const auditEnded = (b: any) => !['queued', 'running'].includes(b.status)

export async function auditOnce(agent: Agent, w: Workload, log: LoadLog): Promise<void> {
  const rec: AuditCall = { account: agent.name, t0: Date.now(), outcome: 'transport' }
  log.audits.push(rec)
  const r = await agent.call('audit_app', { url: pick(w.auditSites), options: { maxPages: 8, maxDepth: 2, maxDurationSeconds: 120 } })
  if (r.kind === 'transport') return
  if (r.kind === 'error') {
    rec.outcome = 'refused'
    rec.code = r.code
    return
  }
  rec.outcome = 'started'
  rec.auditId = r.body.auditId
  const base = w.apiBase()
  const watching = Math.random() < 0.5 && base ? watch(base, String(r.body.browserViewer), 150_000) : null
  rec.final = await follow(agent, w, 'get_audit', { auditId: rec.auditId }, auditEnded)
  if (watching) rec.viewer = await watching
}

export async function directoryRunOnce(agent: Agent, w: Workload, log: LoadLog): Promise<void> {
  const mode = Math.random() < 0.25 ? 'audit' : 'scan'
  const rec: RunCall = { account: agent.name, mode, outcome: 'transport' }
  log.runs.push(rec)
  const sites = mode === 'audit' ? w.auditSites.slice(0, 2) : [...w.scanSites].sort(() => Math.random() - 0.5).slice(0, 3)
  const args =
    mode === 'audit' ? { urls: sites, mode, options: { maxPages: 5, maxDepth: 1, maxDurationSeconds: 120 } } : { urls: sites, mode }
  const r = await agent.call('start_directory_run', args)
  if (r.kind === 'transport') return
  if (r.kind === 'error') {
    rec.outcome = 'refused'
    rec.code = r.code
    return
  }
  rec.outcome = 'started'
  rec.runId = r.body.runId
  rec.final = await follow(agent, w, 'start_directory_run', { runId: rec.runId }, (b) => ['completed', 'failed'].includes(b.status))
}

async function readOnce(agent: Agent, log: LoadLog): Promise<void> {
  const r = Math.random() < 0.5 ? await agent.call('get_account', {}) : await agent.call('scan_history', { limit: 5 })
  log.reads[r.kind === 'ok' ? 'ok' : r.kind]++
}

/** A live viewer on an api that is up: the link's path and token, counted frames, how it ended. */
export async function watch(apiBase: string, link: string, maxMs: number): Promise<ViewerResult> {
  const u = new URL(link)
  const token = decodeURIComponent(u.hash.slice(1))
  const res: ViewerResult = { frames: 0, messages: 0, end: 'timeout' }
  const ws = new WebSocket(`${apiBase.replace(/^http/, 'ws')}${u.pathname}/ws`, { headers: { origin: apiBase } } as unknown as string[])
  const closed = new Promise<void>((resolve) => {
    ws.onopen = () => ws.send(token)
    ws.onmessage = (ev) => {
      res.messages++
      if (String(ev.data).startsWith('{"type":"frame"')) res.frames++
    }
    ws.onerror = () => {
      res.end = 'error'
    }
    ws.onclose = (ev) => {
      if (res.end !== 'timeout (closed by the viewer)') res.end = ev.code === CLOSE_ENDED ? 'ended' : String(ev.code)
      resolve()
    }
  })
  await withTimeout(closed, maxMs, 'viewer').catch(() => {
    res.end = 'timeout (closed by the viewer)'
    ws.close()
  })
  return res
}

/** One account's loop: start an operation every gap while fewer than maxInFlight of its own run; all of them, awaited. */
export async function agentLoop(agent: Agent, w: Workload, log: LoadLog, maxInFlight = 3): Promise<void> {
  const started: Promise<void>[] = []
  for (let i = 0; i < 10_000 && Date.now() < w.loadUntil; i++) {
    await Bun.sleep(Math.min(rand(...w.gapMs), Math.max(0, w.loadUntil - Date.now())))
    if (Date.now() >= w.loadUntil) break
    if (agent.inFlight >= maxInFlight) {
      await readOnce(agent, log)
      continue
    }
    const x = Math.random()
    const op =
      x < 0.55
        ? () => scanOnce(agent, w, log)
        : x < 0.7
          ? () => auditOnce(agent, w, log)
          : x < 0.8 && agent.plan === 'scale'
            ? () => directoryRunOnce(agent, w, log)
            : () => readOnce(agent, log)
    agent.inFlight++
    started.push(
      op()
        .catch((e) => void log.transportSamples.push(`op: ${errorMessage(e)}`))
        .finally(() => agent.inFlight--),
    )
  }
  await Promise.all(started)
}
