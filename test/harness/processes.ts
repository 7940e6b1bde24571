// Crawler processes for fault tests: real `bun server/crawler.ts` children, each in a process group of its
// own (so a signal reaches its Chromium too), with their output in a log file, all killed when the file's
// tests end, and every wait for an exit bounded.
import { spawn, type ChildProcess } from 'node:child_process'
import { openSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestService } from './service.ts'
import { machineDeadline } from './machine.ts'
import { within } from './wait.ts'

const ROOT = join(import.meta.dir, '..', '..')
const children: ChildProcess[] = []

const alive = (p: ChildProcess) => p.exitCode === null && p.signalCode === null

/** A crawler-only process sharing the service's PostgreSQL, Redis and key prefix; extra overrides the environment. */
export function spawnCrawler(svc: TestService, extra: Record<string, string> = {}): ChildProcess {
  const c = svc.running.services.config
  const log = openSync(join(tmpdir(), `appaudit-crawler-${process.pid}-${Date.now()}-${children.length}.log`), 'w')
  const p = spawn('bun', ['server/crawler.ts'], {
    cwd: ROOT,
    detached: true,
    stdio: ['ignore', log, log],
    env: {
      ...process.env,
      DATABASE_URL: c.DATABASE_URL,
      REDIS_URL: c.REDIS_URL,
      REDIS_PREFIX: c.REDIS_PREFIX,
      ALLOW_PRIVATE_TARGETS: 'true',
      JOB_CLAIM_IDLE_MS: c.JOB_CLAIM_IDLE_MS.toString(),
      LOG_LEVEL: 'warn',
      ...extra,
    },
  })
  children.push(p)
  return p
}

/**
 * An api-only process (`bun server/main.ts`, ROLE=api, port 0) sharing the service's PostgreSQL, Redis and
 * key prefix, and its MCP endpoint read from the banner it prints once it listens.
 */
export async function spawnApi(svc: TestService, extra: Record<string, string> = {}): Promise<{ proc: ChildProcess; mcpUrl: string }> {
  const c = svc.running.services.config
  const log = openSync(join(tmpdir(), `appaudit-api-${process.pid}-${Date.now()}-${children.length}.log`), 'w')
  const p = spawn('bun', ['server/main.ts'], {
    cwd: ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', log],
    env: {
      ...process.env,
      ROLE: 'api',
      PORT: '0',
      DATABASE_URL: c.DATABASE_URL,
      REDIS_URL: c.REDIS_URL,
      REDIS_PREFIX: c.REDIS_PREFIX,
      ALLOW_PRIVATE_TARGETS: 'true',
      LOG_LEVEL: 'warn',
      ...extra,
    },
  })
  children.push(p)
  let out = ''
  const banner = new Promise<string>((resolve, reject) => {
    p.stdout!.on('data', (chunk: Buffer) => {
      out = (out + chunk.toString()).slice(-8_192)
      const m = /MCP endpoint: (\S+)/.exec(out)
      if (m) resolve(m[1]!.replace('localhost', '127.0.0.1'))
    })
    p.once('exit', (code) => reject(new Error(`api process exited with ${code} before its banner`)))
  })
  return { proc: p, mcpUrl: await within(banner, machineDeadline(60_000), 'api banner') }
}

/** Sends signal to the child's whole process group (the child and its browsers). */
export function signalGroup(p: ChildProcess, signal: NodeJS.Signals): void {
  if (alive(p)) process.kill(-p.pid!, signal)
}

/** Resolves when the child has exited; fails the test when it has not within ms. */
export function exited(p: ChildProcess, ms = 30_000): Promise<void> {
  if (!alive(p)) return Promise.resolve()
  return within(new Promise<void>((r) => p.once('exit', () => r())), ms, `exit of process ${p.pid}`)
}

/** For afterAll: kills every child still running, with its process group. */
export function killChildren(): void {
  for (const p of children) if (alive(p)) process.kill(-p.pid!, 'SIGKILL')
}
