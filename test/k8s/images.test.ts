// The images, built and run for real (podman, as the containers of a pod would run): both images built by
// scripts/build-images.sh, started with the real PostgreSQL and Redis of this machine as a read-only,
// unprivileged container each, then scan_app and a small audit through them over MCP; the user is not
// root and the root filesystem refuses writes; SIGTERM makes the crawler hand its audit back and exit within
// the grace period, and the api exit cleanly; and the rendered api and crawler Deployments start with
// `podman kube play` and answer their probes. Skipped, with a line saying so, where podman is not installed;
// the kube play test alone where podman's pause binary (catatonit) is not.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { stringify } from 'yaml'
import { render } from '../../scripts/kustomize.ts'
import { createAccount, createApiKey } from '../../shared/db/accounts.ts'
import { postgresClient } from '../../shared/db/index.ts'
import { startAuditSite, type AuditSite } from '../fixtures/audit-site.ts'
import { auditEnded, connectClient, ok } from '../harness/client.ts'
import { dropRedisPrefix, freshDatabase, REDIS_URL } from '../harness/service.ts'
import { unusedPort } from '../harness/ports.ts'
import { until } from '../harness/wait.ts'

const ROOT = join(import.meta.dir, '../..')
const podmanPath = Bun.which('podman')
if (!podmanPath)
  console.log('images.test.ts: podman is not installed here, so the image tests are skipped (apt-get install podman runc catatonit)')
/**
 * The pause process of a pod (`podman kube play`): catatonit, looked up on PATH and in podman's helper
 * directories (containers.conf's helper_binaries_dir, as Debian installs it).
 */
const PODMAN_HELPER_DIRS = ['/usr/local/libexec/podman', '/usr/local/lib/podman', '/usr/libexec/podman', '/usr/lib/podman']
const pauseBinary = Bun.which('catatonit') ?? PODMAN_HELPER_DIRS.map((d) => join(d, 'catatonit')).find((f) => existsSync(f))
if (podmanPath && !pauseBinary)
  console.log(
    'images.test.ts: podman is here but its pause binary catatonit is not, so the kube play test is skipped (apt-get install podman runc catatonit)',
  )

const CONF = join(ROOT, '.tools/containers.conf')
const env = { ...process.env, CONTAINERS_CONF: CONF }
const PREFIX = `imgtest:${process.pid}:`
const started: string[] = []
const sites: AuditSite[] = []
let db: Awaited<ReturnType<typeof freshDatabase>>
let sizes: Record<string, number> = {}

async function podman(args: string[], timeoutMs = 120_000): Promise<{ code: number; out: string; err: string }> {
  const p = Bun.spawn(['podman', '--runtime', 'runc', ...args], {
    env,
    stdout: 'pipe',
    stderr: 'pipe',
    timeout: timeoutMs,
    killSignal: 'SIGKILL',
  })
  const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()])
  return { code: await p.exited, out: out.trim(), err: err.trim() }
}

/** A container of one of the images, hardened as the manifests run it, on the host's network. */
async function run(name: string, image: 'api' | 'crawler', extra: Record<string, string>, flags: string[] = []) {
  const vars = {
    DATABASE_URL: db.url,
    REDIS_URL,
    REDIS_PREFIX: PREFIX,
    ALLOW_PRIVATE_TARGETS: 'true',
    LOG_LEVEL: 'info',
    JOB_CLAIM_IDLE_MS: '5000',
    SECRETS_KEY: Buffer.alloc(32, 3).toString('base64'),
    ...extra,
  }
  const r = await podman([
    'run',
    '-d',
    '--name',
    name,
    '--network=host',
    '--read-only',
    '--tmpfs',
    '/tmp:size=512m',
    '--cap-drop=ALL',
    '--security-opt=no-new-privileges',
    ...(image === 'crawler' ? ['--shm-size=512m'] : []),
    ...Object.entries(vars).flatMap(([k, v]) => ['-e', `${k}=${v}`]),
    ...flags,
    `localhost/appaudit-${image}:local`,
  ])
  if (r.code !== 0) throw new Error(`podman run ${name}: ${r.err}`)
  started.push(name)
}

/**
 * The port a container bound on port 0 (the host's network), from what it wrote at start: the api's banner
 * names its URL, a crawler logs the port of its health server.
 */
async function boundPort(name: string, pattern: RegExp, ms = 90_000): Promise<number> {
  let port = 0
  await until(
    async () => {
      const logs = await podman(['logs', name], 30_000)
      port = Number(pattern.exec(logs.out + logs.err)?.[1] ?? 0)
      return port > 0
    },
    ms,
    `the port ${name} bound`,
    { everyMs: 500 },
  )
  return port
}
const API_PORT = /base URL:\s+http:\/\/[^\s/]+:(\d+)/
const HEALTH_PORT = /crawler health server listening[^\n]*"port":(\d+)/

const ready = (port: number, ms = 90_000) =>
  until(
    async () => {
      const r = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(5_000) }).catch(() => null)
      return r?.status === 200
    },
    ms,
    `readiness on port ${port}`,
    { everyMs: 500 },
  )

/** The pods `podman kube play` made of the Deployments of playable() below: "<name>-pod" and, by version, "-0". */
async function playedPods(): Promise<string[]> {
  const { out } = await podman(['pod', 'ps', '--format', '{{.Name}}'], 30_000)
  return out.split('\n').filter((name) => /^appaudit-(api|crawler)-play-pod/.test(name))
}

/**
 * The rendered Deployments as a cluster would run them here: the ConfigMap's and Secret's values, the local
 * images, the host's network (PostgreSQL and Redis are on this machine's loopback), the api on `port` and the
 * crawler's health server on `health`, one replica each.
 */
function playable(docs: any[], port: number, health: number) {
  const values: Record<string, string> = {
    DATABASE_URL: db.url,
    REDIS_URL,
    REDIS_PREFIX: PREFIX,
    SECRETS_KEY: Buffer.alloc(32, 3).toString('base64'),
    CRON_SECRET: 'x'.repeat(32),
    BASE_URL: `http://127.0.0.1:${port}`,
  }
  const config = docs.find((x) => x.kind === 'ConfigMap')!.data as Record<string, string>
  return docs
    .filter((d) => d.kind === 'Deployment')
    .map((d: any) => {
      const spec = d.spec.template.spec
      const container = spec.containers[0]
      const isApi = d.metadata.name === 'appaudit-api'
      container.image = `localhost/appaudit-${isApi ? 'api' : 'crawler'}:local`
      delete container.envFrom
      container.env = [
        ...Object.entries({ ...config, ...values }).map(([name, value]) => ({ name, value })),
        ...container.env.filter((e: { name: string; value?: string }) => e.value !== undefined),
        { name: isApi ? 'PORT' : 'HEALTH_PORT', value: String(isApi ? port : health) },
      ].filter((e, i, all) => all.findLastIndex((x) => x.name === e.name) === i)
      for (const p of ['startupProbe', 'livenessProbe', 'readinessProbe']) container[p].httpGet.port = isApi ? port : health
      container.ports = []
      spec.hostNetwork = true
      delete spec.serviceAccountName
      return { ...d, metadata: { name: `${d.metadata.name}-play`, labels: d.metadata.labels }, spec: { ...d.spec, replicas: 1 } }
    })
}

/** Both ports answer /readyz with 200 ('ready'), or a played pod's log says its port was taken ('taken'). */
const readyOrTaken = (ports: number[], ms: number) =>
  until(
    async (): Promise<'ready' | 'taken' | false> => {
      const states = await Promise.all(
        ports.map((port) =>
          fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(5_000) }).then(
            (r) => r.status === 200,
            () => false,
          ),
        ),
      )
      if (states.every(Boolean)) return 'ready'
      for (const pod of await playedPods()) {
        const logs = await podman(['pod', 'logs', pod], 30_000)
        if (`${logs.out}\n${logs.err}`.includes('is taken by another process')) return 'taken'
      }
      return false
    },
    ms,
    `readiness on ports ${ports.join(' and ')}`,
    { everyMs: 1_000 },
  )

describe.skipIf(!podmanPath)('the images, built and run with podman', () => {
  let apiPort = 0
  let crawlerHealth = 0

  beforeAll(async () => {
    const build = Bun.spawn(['bash', join(ROOT, 'scripts/build-images.sh'), 'local'], {
      env,
      stdout: 'pipe',
      stderr: 'pipe',
      timeout: 20 * 60_000,
      killSignal: 'SIGKILL',
    })
    const [out, err] = await Promise.all([new Response(build.stdout).text(), new Response(build.stderr).text()])
    if ((await build.exited) !== 0) throw new Error(`build-images.sh failed:\n${err.slice(-3000)}`)
    sizes = Object.fromEntries(
      out
        .trim()
        .split('\n')
        .map((l) => [l.split(' ')[0]!, Number(l.split(' ')[1])]),
    )
    console.log(
      `images: ${Object.entries(sizes)
        .map(([k, v]) => `${k} ${(v / 1e6).toFixed(0)} MB`)
        .join(', ')}`,
    )
    db = await freshDatabase()
    // Port 0 for both: each says which port it got.
    await run('appaudit-test-api', 'api', { PORT: '0' })
    await run('appaudit-test-crawler', 'crawler', { HEALTH_PORT: '0', AUDIT_CONCURRENCY: '1' })
    apiPort = await boundPort('appaudit-test-api', API_PORT)
    crawlerHealth = await boundPort('appaudit-test-crawler', HEALTH_PORT)
    await ready(apiPort)
    await ready(crawlerHealth)
  }, 25 * 60_000)

  afterAll(async () => {
    for (const name of started) await podman(['rm', '-f', '-t', '0', name]).catch(() => {})
    await podman(['kube', 'down', join(tmpdir(), 'appaudit-kube-play.yaml')]).catch(() => {})
    for (const s of sites) await s.stop()
    await dropRedisPrefix(REDIS_URL, PREFIX).catch(() => 0)
    await db?.drop()
  }, 120_000)

  const client = async () => {
    const sql = postgresClient(db.url, 1)
    try {
      const account = await createAccount(sql, 'scale')
      return await connectClient(`http://127.0.0.1:${apiPort}/api/mcp`, (await createApiKey(sql, account.id)).plaintext)
    } finally {
      await sql.end()
    }
  }

  test('both images are reasonably small', () => {
    expect(sizes['appaudit-api:local']).toBeLessThan(1_000_000_000)
    expect(sizes['appaudit-crawler:local']).toBeLessThan(2_000_000_000)
  })

  test('scan_app and a small audit run through the containers', async () => {
    const site = startAuditSite({ pages: 3 })
    sites.push(site)
    const c = await client()
    const report = await ok(c, 'scan_app', { url: site.url })
    expect(typeof report.score).toBe('number')
    const audit = await ok(c, 'audit_app', { url: site.url, options: { maxPages: 3, maxDepth: 1 } })
    const done = await auditEnded(c, audit.auditId, 120_000, 'the audit in the containers')
    expect({ status: done.status, pages: done.result?.pagesScanned }).toEqual({ status: 'completed', pages: 3 })
    await c.close()
  }, 180_000)

  test('runs as an unprivileged user on a read-only root filesystem; /tmp is writable', async () => {
    for (const name of ['appaudit-test-api', 'appaudit-test-crawler']) {
      expect((await podman(['exec', name, 'id', '-u'])).out).toBe('10001')
      const write = await podman(['exec', name, 'sh', '-c', 'touch /app/x'])
      expect(write.code).not.toBe(0)
      expect(write.err).toContain('Read-only file system')
      expect((await podman(['exec', name, 'sh', '-c', 'touch /tmp/x && echo ok'])).out).toBe('ok')
      // No capabilities left, none to gain.
      const status = (await podman(['exec', name, 'cat', '/proc/1/status'])).out
      expect(/^CapEff:\s+0+$/m.test(status)).toBe(true)
      expect(/^NoNewPrivs:\s+1$/m.test(status)).toBe(true)
    }
  }, 60_000)

  test('SIGTERM: the crawler hands its audit back and exits within the grace period; the next crawler finishes it', async () => {
    const site = startAuditSite({ pages: 12, delayMs: 600 })
    sites.push(site)
    const c = await client()
    const audit = await ok(c, 'audit_app', { url: site.url, options: { maxPages: 12, maxDepth: 2 } })
    await until(
      async () => {
        const a = await ok(c, 'get_audit', { auditId: audit.auditId })
        return a.status === 'running' && a.progress.pagesScanned >= 2
      },
      60_000,
      'the audit under way',
      { everyMs: 250 },
    )
    const t0 = Date.now()
    const stop = await podman(['stop', '-t', '45', 'appaudit-test-crawler'], 60_000)
    const tookMs = Date.now() - t0
    console.log(`images: the crawler stopped ${tookMs} ms after SIGTERM, mid-audit`)
    expect(stop.code).toBe(0)
    // Within the grace period by the exit code, not the clock: a shutdown still running after 25 s exits 1
    // (server/main.ts), and one still running at podman's 45 s is killed (137).
    const exit = await podman(['inspect', '--format', '{{.State.ExitCode}}', 'appaudit-test-crawler'])
    expect(exit.out).toBe('0')
    // Handed back: queued again, no holder, its pages kept.
    const handedBack = await ok(c, 'get_audit', { auditId: audit.auditId })
    expect(handedBack.status).toBe('queued')
    expect(handedBack.progress.pagesScanned).toBeGreaterThanOrEqual(2)
    await run('appaudit-test-crawler-2', 'crawler', { HEALTH_PORT: '0', AUDIT_CONCURRENCY: '1' })
    const done = await auditEnded(c, audit.auditId, 120_000, 'the next crawler to finish it')
    expect(done.status).toBe('completed')
    expect(done.result.pagesScanned).toBe(12)
    await c.close()

    const apiStop = await podman(['stop', '-t', '30', 'appaudit-test-api'], 60_000)
    expect(apiStop.code).toBe(0)
    expect((await podman(['inspect', '--format', '{{.State.ExitCode}}', 'appaudit-test-api'])).out).toBe('0')
  }, 300_000)

  test.skipIf(!pauseBinary)(
    'the rendered api and crawler Deployments start with podman kube play and answer their probes',
    async () => {
      const docs = render(join(ROOT, 'k8s/overlays/prod'))
      const file = join(tmpdir(), 'appaudit-kube-play.yaml')
      // The manifests' probes name a port, so each is one free a moment ago, not port 0. Should another
      // process take one first, the pod says so (server/port-in-use.ts) and the pods are played again on
      // new ports, once.
      let up: { port: number; health: number } | null = null
      for (let attempt = 1; !up; attempt++) {
        const port = await unusedPort()
        const health = await unusedPort()
        writeFileSync(
          file,
          playable(docs, port, health)
            .map((d) => stringify(d))
            .join('---\n'),
        )
        const play = await podman(['kube', 'play', file], 180_000)
        expect({ code: play.code, err: play.code ? play.err : '' }).toEqual({ code: 0, err: '' })
        if ((await readyOrTaken([port, health], 120_000)) === 'ready') up = { port, health }
        else {
          expect((await podman(['kube', 'down', file], 120_000)).code).toBe(0)
          if (attempt === 2) throw new Error('the pods found their ports taken twice')
        }
      }
      const live = await fetch(`http://127.0.0.1:${up.health}/healthz`)
      expect((await live.json()).role).toBe('crawler')
      expect((await podman(['kube', 'down', file], 120_000)).code).toBe(0)
    },
    300_000,
  )
})
