// The known-application probes against fixture servers that answer with the applications' real bodies
// (test/fixtures/apps/): the WordPress group only when the page is WordPress, base-path probes only when the
// scanned URL has a base path, and the checks' judgement of what came back. No browser: the plain-HTTP main
// response and the path probes, as the gatherer makes them, through the egress proxy.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { probePaths } from '../../../crawler/gather/probes.ts'
import { followChain } from '../../../crawler/gather/http-chain.ts'
import { exposedPackageManifest } from '../../../shared/checks/exposure/exposed-package-manifest.ts'
import { webAppExposure } from '../../../shared/checks/exposure/web-app-exposure.ts'
import { APP_PROBE_BUDGET, WORDPRESS_PROBES } from '../../../shared/checks/probe-paths-apps.ts'
import { PROBE_PATHS } from '../../../shared/checks/probe-paths.ts'
import { runCheck } from '../../../shared/checks/runner.ts'
import { type EgressProxy, startEgressProxy } from '../../../shared/egress/proxy.ts'
import { type AppKind, startAppSite } from '../../fixtures/apps/apps.ts'
import { makeArtifacts } from '../../shared/checks/artifacts.ts'

const TIMEOUT_MS = 15_000
let proxy: EgressProxy

beforeAll(async () => {
  proxy = await startEgressProxy({ allowPrivate: true, trustedHosts: [] })
})
afterAll(async () => {
  await proxy?.stop()
})

/** One scan's plain-HTTP part of a fixture: main response, path probes, and the two checks' results. */
async function scan(kind: AppKind) {
  const site = startAppSite(kind)
  try {
    const main = await followChain(site.url, proxy, TIMEOUT_MS)
    if (!main.last.ok) throw new Error(`${kind}: ${main.last.reason}`)
    const finalUrl = main.chain.finalUrl!
    const mainRequests = site.requests.length
    const { probes, apps, sent } = await probePaths(finalUrl, main.last.res, proxy, TIMEOUT_MS)
    const artifacts = makeArtifacts({
      target: { url: site.url, finalUrl, origin: site.origin, scheme: 'http' },
      mainResponse: main.last.res,
      probes,
    })
    return {
      apps,
      sent,
      probeRequests: site.requests.slice(mainRequests),
      app: runCheck(webAppExposure, artifacts),
      manifest: runCheck(exposedPackageManifest, artifacts),
    }
  } finally {
    site.stop()
  }
}

const findings = (r: Awaited<ReturnType<typeof scan>>) =>
  ((r.app.evidence.findings ?? []) as Array<{ app: string; item: string; severity: string; details: Record<string, unknown> }>).map(
    (f) => `${f.app} ${f.item}: ${f.severity}`,
  )

describe('known-application probes', () => {
  test('a WordPress site with plain permalinks: all six WordPress paths, once each; readme, XML-RPC, user list, author archive, WP-Cron found', async () => {
    const r = await scan('wordpress-plain')
    expect(r.apps.paths).toHaveLength(Object.keys(WORDPRESS_PROBES).length)
    expect(r.probeRequests).toHaveLength(PROBE_PATHS.length + Object.keys(WORDPRESS_PROBES).length)
    for (const p of ['/readme.html', '/xmlrpc.php', '/wp-json/wp/v2/users', '/?rest_route=/wp/v2/users', '/?author=1', '/wp-cron.php'])
      expect(r.probeRequests.filter((q) => q === p)).toHaveLength(1)
    expect(r.app.status).toBe('fail')
    expect(r.app.severity).toBe('medium')
    expect(findings(r)).toEqual([
      'WordPress readme.html: low',
      'WordPress XML-RPC endpoint: medium',
      'WordPress REST API user list: medium',
      'WordPress author archive: low',
      'WordPress WP-Cron endpoint: low',
    ])
    // The user list is counted and its slugs masked; names, links and avatar hashes stay out of the report.
    const text = JSON.stringify(r.app)
    expect(text).toContain('a***n')
    expect(text).not.toContain('Editor Jane')
    expect(text).not.toContain('gravatar')
    expect(r.app.summary).toMatch(
      /\/\?rest_route=\/wp\/v2\/users lists 2 WordPress user\(s\) \(a\*\*\*n, e\*\*\*e\); 4 more: readme\.html, /,
    )
  })

  test('pretty permalinks: the user list at /wp-json/, the author read from the redirect without following it', async () => {
    const r = await scan('wordpress-pretty')
    expect(findings(r)).toContain('WordPress author archive: low')
    const author = (r.app.evidence.findings as Array<{ item: string; details: Record<string, unknown>; url: string }>).find(
      (f) => f.item === 'author archive',
    )!
    expect(author.details).toEqual({ slug: 'a***n', via: 'redirect' })
    expect(r.probeRequests).not.toContain('/author/admin/')
    const users = (r.app.evidence.findings as Array<{ item: string; url: string }>).find((f) => f.item === 'REST API user list')!
    expect(new URL(users.url).pathname).toBe('/wp-json/wp/v2/users')
  })

  test('WordPress behind a careful nginx (403, 404, no route, author to the home page): probed, nothing found', async () => {
    const r = await scan('wordpress-careful')
    expect(r.apps.paths).toHaveLength(Object.keys(WORDPRESS_PROBES).length)
    expect(r.app.status).toBe('pass')
  })

  test('DokuWiki under /dokuwiki/: its installer found by its real page; behind nginx, nothing', async () => {
    const r = await scan('dokuwiki')
    expect(r.apps.plan.base?.base).toBe('/dokuwiki/')
    expect(r.apps.plan.wordpress).toBeNull()
    expect(r.probeRequests).toContain('/dokuwiki/install.php')
    expect(r.probeRequests.filter((p) => Object.values(WORDPRESS_PROBES).some((w) => p.endsWith(w)))).toEqual([])
    expect(findings(r)).toEqual(['DokuWiki installer (install.php): medium'])
    expect(r.app.summary).toContain('/dokuwiki/install.php is the DokuWiki installer')
    const careful = await scan('dokuwiki-careful')
    expect(careful.app.status).toBe('pass')
    expect(careful.probeRequests).toContain('/dokuwiki/install.php')
  })

  test('phpMyAdmin under /phpmyadmin/: the bundled documentation names 5.2.1', async () => {
    const r = await scan('phpmyadmin')
    expect(findings(r)).toEqual(['phpMyAdmin bundled documentation: low'])
    expect(r.app.summary).toContain('phpMyAdmin 5.2.1 bundled documentation')
  })

  test('MediaWiki at /mediawiki/index.php/Main_Page: base /mediawiki/, the installer names 1.39.17, composer.json is a manifest', async () => {
    const r = await scan('mediawiki')
    expect(r.apps.plan.base?.base).toBe('/mediawiki/')
    expect(findings(r)).toEqual(['MediaWiki installer (mw-config/): medium'])
    expect(r.app.summary).toContain('MediaWiki 1.39.17 installer')
    expect(r.manifest.status).toBe('fail')
    expect(r.manifest.summary).toContain('/mediawiki/composer.json')
    expect(r.manifest.summary).toContain('mediawiki/core')
  })

  test('an SPA under /app/ answering index.html everywhere: base probes sent, nothing found', async () => {
    const r = await scan('spa-under-path')
    expect(r.apps.paths).toEqual(['/app/install.php', '/app/doc/html/index.html', '/app/mw-config/', '/app/composer.json'])
    expect(r.app.status).toBe('pass')
    expect(r.manifest.status).toBe('pass')
  })

  test('a plain site at the root pays nothing: no application probe is sent, and the check says so', async () => {
    const r = await scan('plain-site')
    expect(r.apps.paths).toEqual([])
    expect(r.sent).toBe(PROBE_PATHS.length)
    expect(r.probeRequests).toHaveLength(PROBE_PATHS.length)
    expect([r.app.status, r.app.summary]).toEqual(['pass', 'Not WordPress, no base path: nothing to probe.'])
  })

  test('every plan stays within APP_PROBE_BUDGET', async () => {
    const r = await scan('wordpress-plain')
    expect(r.apps.paths.length).toBeLessThanOrEqual(APP_PROBE_BUDGET)
    expect(APP_PROBE_BUDGET).toBe(10)
  })
})
