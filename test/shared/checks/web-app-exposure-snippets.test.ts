// web-app-exposure's nginx and Apache advice, run by the servers it is written for (Debian's nginx and
// apache2, on loopback ports): every path the check reads must then be refused, and the site's other pages
// and queries still served. Skipped where the server is not installed.
import { afterAll, describe, expect, test } from 'bun:test'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { webAppExposure } from '../../../shared/checks/exposure/web-app-exposure.ts'
import { listenerForChild, reservedPort, untilListening } from '../../harness/ports.ts'
import { until } from '../../harness/wait.ts'
import { APACHE, apacheConfig } from '../../harness/apache.ts'

const NGINX = '/usr/sbin/nginx'

const REFUSED = [
  '/xmlrpc.php',
  '/readme.html',
  '/wp-cron.php',
  '/wp-json/wp/v2/users',
  '/?rest_route=/wp/v2/users',
  '/?author=1',
  '/?p=3&author=2',
  '/dokuwiki/install.php',
  '/mediawiki/mw-config/',
  '/phpmyadmin/doc/html/index.html',
]
const SERVED = ['/', '/?s=authority', '/?rest_route=/wp/v2/posts']

const dirs: string[] = []
const stops: Array<() => Promise<unknown>> = []
afterAll(async () => {
  for (const stop of stops) await stop()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

/** A web root holding every file the advice must refuse, so a refusal is the advice's and not a 404 of a missing file. */
function webRoot(): { root: string; www: string } {
  const root = mkdtempSync(join(tmpdir(), 'appaudit-wae-'))
  dirs.push(root)
  chmodSync(root, 0o755)
  const www = join(root, 'www')
  for (const d of ['dokuwiki', 'mediawiki/mw-config', 'phpmyadmin/doc/html', 'wp-json/wp/v2']) mkdirSync(join(www, d), { recursive: true })
  for (const f of ['index.html', 'xmlrpc.php', 'readme.html', 'wp-cron.php', 'wp-json/wp/v2/users', 'dokuwiki/install.php'])
    writeFileSync(join(www, f), 'file')
  writeFileSync(join(www, 'mediawiki/mw-config/index.html'), 'installer')
  writeFileSync(join(www, 'phpmyadmin/doc/html/index.html'), 'docs')
  chmodSync(www, 0o755)
  return { root, www }
}

/** The advice's lines after its first (the sentence saying where they go). */
const snippet = (platform: 'nginx' | 'apache') => webAppExposure.fix[platform]!.split('\n').slice(1).join('\n')

async function statuses(base: string, paths: readonly string[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {}
  for (const p of paths) out[p] = (await fetch(base + p, { redirect: 'manual', signal: AbortSignal.timeout(5_000) })).status
  return out
}

function expectAdviceHolds(got: Record<string, number>) {
  for (const p of REFUSED) expect({ path: p, refused: got[p] === 403 || got[p] === 404 }).toEqual({ path: p, refused: true })
  for (const p of SERVED) expect({ path: p, status: got[p] }).toEqual({ path: p, status: 200 })
}

describe.skipIf(!existsSync(NGINX))('the nginx advice in a real nginx', () => {
  test('refuses every path the check reads, serves the rest', async () => {
    const { root, www } = webRoot()
    // A socket on port 0, handed to nginx as its fd 3 (test/harness/ports.ts): no other process can take the port first.
    const socket = listenerForChild()
    const port = socket.port
    const conf = join(root, 'nginx.conf')
    writeFileSync(
      conf,
      [
        `pid ${root}/nginx.pid;`,
        `error_log ${root}/error.log;`,
        'daemon off;',
        'events {}',
        'http {',
        '  access_log off;',
        `  server {\n    listen 127.0.0.1:${port};\n    root ${www};\n    index index.html;`,
        snippet('nginx'),
        '  }',
        '}',
      ].join('\n'),
    )
    const proc = Bun.spawn([NGINX, '-c', conf, '-p', root], {
      stdio: ['ignore', 'ignore', 'pipe', socket.fd],
      env: { ...process.env, NGINX: '3;' },
    })
    socket.close()
    stops.push(() => {
      proc.kill()
      return proc.exited
    })
    const base = `http://127.0.0.1:${port}`
    await until(async () => (await fetch(`${base}/`).catch(() => null)) !== null, 10_000, 'nginx to answer')
    expectAdviceHolds(await statuses(base, [...REFUSED, ...SERVED]))
  }, 20_000)
})

describe.skipIf(!existsSync(APACHE))('the Apache advice in a real Apache (.htaccess)', () => {
  test('refuses every path the check reads, serves the rest', async () => {
    const { root, www } = webRoot()
    writeFileSync(join(www, '.htaccess'), snippet('apache'))
    const { port, release } = await reservedPort()
    stops.push(release)
    const mods = ['mpm_event', 'authz_core', 'rewrite', 'alias', 'dir', 'mime']
    writeFileSync(join(root, 'httpd.conf'), apacheConfig({ root, port, www, modules: mods, server: ['DirectoryIndex index.html'] }))
    const proc = Bun.spawn([APACHE, '-f', join(root, 'httpd.conf'), '-DFOREGROUND'], { stdout: 'ignore', stderr: 'pipe' })
    stops.push(() => {
      proc.kill()
      return proc.exited
    })
    await untilListening(proc.pid, port, 10_000, 'Apache', () => proc.exitCode !== null)
    await release()
    const base = `http://127.0.0.1:${port}`
    await until(async () => (await fetch(`${base}/`).catch(() => null)) !== null, 10_000, 'Apache to answer')
    expectAdviceHolds(await statuses(base, [...REFUSED, ...SERVED]))
  }, 20_000)
})
