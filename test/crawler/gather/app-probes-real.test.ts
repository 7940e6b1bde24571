// The base-path probes against the real applications: Debian's dokuwiki, mediawiki and phpmyadmin packages
// served by PHP's built-in server under /dokuwiki/, /mediawiki/ and /phpmyadmin/ (symbolic links to
// /usr/share/...), as Debian's Apache aliases put them. Each scan's main response and path probes go through
// the egress proxy as the gatherer sends them; the checks judge what came back. Skipped where PHP or one of
// the packages is missing (apt-get install php-cli dokuwiki mediawiki phpmyadmin); the skipped test's name
// says so.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type Subprocess, spawn } from 'bun'
import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { appProbeCounts } from '../../../crawler/gather/app-probes.ts'
import { followChain } from '../../../crawler/gather/http-chain.ts'
import { probePaths } from '../../../crawler/gather/probes.ts'
import { exposedPackageManifest } from '../../../shared/checks/exposure/exposed-package-manifest.ts'
import { webAppExposure } from '../../../shared/checks/exposure/web-app-exposure.ts'
import { PROBE_PATHS } from '../../../shared/checks/probe-paths.ts'
import { runCheck } from '../../../shared/checks/runner.ts'
import { type EgressProxy, startEgressProxy } from '../../../shared/egress/proxy.ts'
import { makeArtifacts } from '../../shared/checks/artifacts.ts'

const APPS = { dokuwiki: '/usr/share/dokuwiki', mediawiki: '/usr/share/mediawiki', phpmyadmin: '/usr/share/phpmyadmin' }
const PHP = '/usr/bin/php'
const missing = [PHP, ...Object.values(APPS)].filter((p) => !existsSync(p))
/** The first request of a PHP application can build caches for seconds on a loaded machine. */
const TIMEOUT_MS = 60_000

let php: Subprocess | null = null
/** DokuWiki alone, at the origin's root. */
let rootWiki: Subprocess | null = null
let rootWikiOrigin = ''
let origin = ''
let root = ''
let proxy: EgressProxy

async function startPhp(docroot: string): Promise<{ proc: Subprocess; origin: string }> {
  // PHP's server answers a missing file with the nearest index.php above it; the router answers 404 as Apache does.
  const proc = spawn([PHP, '-S', '127.0.0.1:0', '-t', docroot, join(import.meta.dir, '../../fixtures/apps/php-router.php')], {
    stdout: 'ignore',
    stderr: 'pipe',
  })
  const reader = proc.stderr.getReader()
  let seen = ''
  for (let i = 0; i < 50 && !/127\.0\.0\.1:(\d+)/.test(seen); i++) {
    const { value, done } = await reader.read()
    if (done) break
    seen += new TextDecoder().decode(value)
  }
  // PHP's server logs every request: keep reading, or a full pipe stops it.
  void (async () => {
    while (!(await reader.read().catch(() => ({ done: true }))).done) {}
  })()
  const port = /127\.0\.0\.1:(\d+)/.exec(seen)?.[1]
  if (!port) {
    proc.kill()
    throw new Error(`PHP's server did not say its port: ${seen.slice(0, 300)}`)
  }
  return { proc, origin: `http://127.0.0.1:${port}` }
}

async function scan(path: string, at = origin) {
  const main = await followChain(at + path, proxy, TIMEOUT_MS)
  if (!main.last.ok) throw new Error(`${path}: ${main.last.reason}`)
  const finalUrl = main.chain.finalUrl!
  const { probes, apps, sent } = await probePaths(finalUrl, main.last.res, proxy, TIMEOUT_MS)
  const a = makeArtifacts({ target: { url: at + path, finalUrl, origin: at, scheme: 'http' }, mainResponse: main.last.res, probes })
  return { sent, counts: appProbeCounts(apps), app: runCheck(webAppExposure, a), manifest: runCheck(exposedPackageManifest, a) }
}

describe.skipIf(missing.length > 0)(
  `real applications under PHP's server${missing.length > 0 ? ` (skipped: no ${missing.join(', ')})` : ''}`,
  () => {
    beforeAll(async () => {
      proxy = await startEgressProxy({ allowPrivate: true, trustedHosts: [] })
      root = mkdtempSync(join(tmpdir(), 'appaudit-php-'))
      for (const [name, dir] of Object.entries(APPS)) symlinkSync(dir, join(root, name))
      ;({ proc: php, origin } = await startPhp(root))
      ;({ proc: rootWiki, origin: rootWikiOrigin } = await startPhp(APPS.dokuwiki))
    }, TIMEOUT_MS)
    afterAll(async () => {
      for (const p of [php, rootWiki]) {
        p?.kill()
        await p?.exited
      }
      await proxy?.stop()
      if (root) rmSync(root, { recursive: true, force: true })
    })

    test(
      'DokuWiki at /dokuwiki/doku.php: its install.php, four base-path probes and no WordPress one',
      async () => {
        const r = await scan('/dokuwiki/doku.php')
        expect(r.counts).toEqual({ budget: 10, sent: 4, wordpress: 0, basePath: 4 })
        expect(r.sent).toBe(PROBE_PATHS.length + 4)
        expect([r.app.status, r.app.severity]).toEqual(['fail', 'medium'])
        expect(r.app.summary).toContain('/dokuwiki/install.php is the DokuWiki installer')
      },
      TIMEOUT_MS * 3,
    )

    test(
      'DokuWiki at the root: its generator calls for the base-path probes under "/", and install.php is found',
      async () => {
        const r = await scan('/doku.php', rootWikiOrigin)
        // /composer.json is one of PROBE_PATHS: three more requests, not four.
        expect(r.counts).toEqual({ budget: 10, sent: 3, wordpress: 0, basePath: 3 })
        expect([r.app.status, r.app.severity]).toEqual(['fail', 'medium'])
        expect(r.app.summary).toContain('/install.php is the DokuWiki installer')
      },
      TIMEOUT_MS * 3,
    )

    test(
      'MediaWiki at /mediawiki/index.php: mw-config/ names its version, composer.json is a manifest',
      async () => {
        const r = await scan('/mediawiki/index.php')
        expect(r.app.summary).toMatch(/\/mediawiki\/mw-config\/ is the MediaWiki 1\.\d+\.\d+ installer/)
        expect(r.manifest.status).toBe('fail')
        expect(r.manifest.summary).toContain('/mediawiki/composer.json is served (mediawiki/core')
      },
      TIMEOUT_MS * 3,
    )

    test(
      'phpMyAdmin at /phpmyadmin/: the bundled documentation names its version',
      async () => {
        const r = await scan('/phpmyadmin/')
        expect([r.app.status, r.app.severity]).toEqual(['fail', 'low'])
        expect(r.app.summary).toMatch(/\/phpmyadmin\/doc\/html\/index\.html is the phpMyAdmin 5\.\d+\.\d+ bundled documentation/)
      },
      TIMEOUT_MS * 3,
    )
  },
)
