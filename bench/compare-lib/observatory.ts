// The Observatory side: preparing the installed package for offline use and running it on a target through
// observatory-runner.mjs under node.
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { withTimeout } from '../lib/stats.ts'

const ROOT = join(import.meta.dir, '..', '..')
export const OBSERVATORY_DIR = join(ROOT, 'node_modules', '@mdn', 'mdn-http-observatory')
const RUNNER = join(import.meta.dir, 'observatory-runner.mjs')
const RUN_TIMEOUT_MS = 45_000

/**
 * Top-level domains written to conf/tld-list.json when the package's postinstall could not download IANA's
 * list. Only its API's host name validation reads the list, which scan() does not call; a short list is enough.
 */
const OFFLINE_TLDS = ['com', 'net', 'org', 'io', 'app', 'dev', 'test', 'example', 'localhost', 'uk', 'de', 'fr']

export interface ObservatoryTest {
  expectation: string
  pass: boolean | null
  result: string | null
  scoreModifier: number | null
  data?: unknown
  [key: string]: unknown
}

export interface ObservatoryResult {
  scan: {
    algorithmVersion: number
    grade: string
    score: number
    statusCode: number
    testsPassed: number
    testsFailed: number
    testsQuantity: number
    error: string | null
  }
  tests: Record<string, ObservatoryTest>
  via: string
  /** The scan inside the node process. */
  ms: number
  /** The whole node process, start-up included, as a CLI user waits for it. */
  wallMs: number
  selfCheck?: { identical: boolean; replica: unknown }
}

/** How to point the Observatory at a site. */
export type ObservatoryTarget = { target: string } | { host: string; httpPort: number; httpsPort: number }

export function describeTarget(t: ObservatoryTarget): string {
  return 'target' in t ? t.target : `${t.host} (http :${t.httpPort}, https :${t.httpsPort})`
}

export function observatoryVersion(): string {
  const pkg = JSON.parse(readFileSync(join(OBSERVATORY_DIR, 'package.json'), 'utf8')) as { version: string }
  return pkg.version
}

/**
 * Writes what the package's postinstall would have downloaded, when it is missing: an empty HSTS preload list
 * (so no local host counts as preloaded) and a short TLD list. Never overwrites a list that is there.
 * Returns what it wrote.
 */
export function prepareObservatory(): string[] {
  if (!existsSync(join(OBSERVATORY_DIR, 'src', 'scanner', 'index.js'))) {
    throw new Error(`@mdn/mdn-http-observatory is not installed at ${OBSERVATORY_DIR}`)
  }
  const written: string[] = []
  const preload = join(OBSERVATORY_DIR, 'conf', 'hsts-preload.json')
  if (!existsSync(preload)) {
    writeFileSync(preload, '{}\n')
    written.push('conf/hsts-preload.json ({})')
  }
  const tlds = join(OBSERVATORY_DIR, 'conf', 'tld-list.json')
  if (!existsSync(tlds)) {
    writeFileSync(tlds, `${JSON.stringify(OFFLINE_TLDS)}\n`)
    written.push(`conf/tld-list.json (${OFFLINE_TLDS.length} TLDs)`)
  }
  return written
}

/** How many hosts conf/hsts-preload.json lists (0 for the offline stand-in). */
export function preloadListSize(): number {
  try {
    return Object.keys(JSON.parse(readFileSync(join(OBSERVATORY_DIR, 'conf', 'hsts-preload.json'), 'utf8')) as object).length
  } catch {
    return -1
  }
}

export function nodePath(): string {
  for (const p of ['/usr/bin/node', '/usr/local/bin/node']) if (existsSync(p)) return p
  return 'node'
}

/** One Observatory scan in its own node process. `extraCa` is a PEM file node trusts besides its CAs. */
export async function runObservatory(
  target: ObservatoryTarget,
  opts: { extraCa?: string; selfCheck?: boolean } = {},
): Promise<ObservatoryResult> {
  const spec = { ...target, ...(opts.selfCheck ? { selfCheck: true } : {}) }
  const t0 = performance.now()
  const proc = Bun.spawn([nodePath(), RUNNER, JSON.stringify(spec)], {
    cwd: ROOT,
    stdout: 'pipe',
    stderr: 'pipe',
    env: { ...process.env, ...(opts.extraCa ? { NODE_EXTRA_CA_CERTS: opts.extraCa } : {}) },
  })
  const done = (async () => {
    const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()])
    await proc.exited
    return { out, err }
  })()
  let res: { out: string; err: string }
  try {
    res = await withTimeout(done, RUN_TIMEOUT_MS, `Observatory on ${describeTarget(target)}`)
  } catch (e) {
    proc.kill('SIGKILL')
    throw e
  }
  const line = res.out.trim().split('\n').pop() ?? ''
  let parsed: (ObservatoryResult & { error?: undefined }) | { error: string }
  try {
    parsed = JSON.parse(line)
  } catch {
    throw new Error(
      `Observatory on ${describeTarget(target)} printed no JSON (exit ${proc.exitCode}): ${(res.out + res.err).slice(0, 400)}`,
    )
  }
  if (parsed.error !== undefined) throw new Error(`Observatory on ${describeTarget(target)}: ${parsed.error}`)
  return { ...(parsed as ObservatoryResult), wallMs: performance.now() - t0 }
}

/**
 * The target for a site scanned at `scanUrl`: its host and port, as the Observatory's CLI takes them. When the
 * scan starts on http and the site also serves https on another port, both ports on the scanned host name, as
 * a real site's 80 and 443 would be (every fixture listens on 127.0.0.1, whatever name its URLs use, and the
 * test certificate names both localhost and 127.0.0.1).
 */
export function observatoryTargetFor(scanUrl: string, origins: { http?: string; https?: string }): ObservatoryTarget {
  const u = new URL(scanUrl)
  const port = Number(u.port || (u.protocol === 'https:' ? 443 : 80))
  if (u.protocol === 'http:' && origins.https) {
    const httpsPort = Number(new URL(origins.https).port || 443)
    if (httpsPort !== port) return { host: u.hostname, httpPort: port, httpsPort }
  }
  return { target: `${u.hostname}:${port}` }
}
