// web-app-exposure and its probe plan: when WordPress and base-path probes are planned, and how each answer is
// read, on the applications' real bodies (test/fixtures/apps/) and on the answers that must not count.
import { describe, expect, test } from 'bun:test'
import { webAppExposure } from '../../../shared/checks/exposure/web-app-exposure.ts'
import { titleFor } from '../../../shared/checks/runner.ts'
import {
  maskName,
  readAuthorArchive,
  readDokuWikiInstaller,
  readMediaWikiInstaller,
  readPhpMyAdminDocs,
  readUserList,
  readWordPressReadme,
} from '../../../shared/checks/exposure/web-app-pages.ts'
import {
  APP_PROBE_BUDGET,
  appProbePaths,
  basePathOf,
  planAppProbes,
  wikiRootOf,
  wordpressOf,
} from '../../../shared/checks/probe-paths-apps.ts'
import { BASELINE_PROBE, PROBE_PATHS } from '../../../shared/checks/probe-paths.ts'
import type { ProbeResult } from '../../../shared/checks/types.ts'
import { REAL, wordpressFront, wordpressUsers } from '../../fixtures/apps/apps.ts'
import { makeArtifacts, probe, SPA_HTML } from './artifacts.ts'

const ORIGIN = 'https://example.com'

describe('the plan', () => {
  test('WordPress is recognised by each of its head marks alone; other pages are not', () => {
    const url = `${ORIGIN}/`
    expect(wordpressOf('<meta name="generator" content="WordPress 6.1.9" />', url)?.signals).toEqual(['generator'])
    expect(wordpressOf(`<link rel="https://api.w.org/" href="${ORIGIN}/wp-json/" />`, url)).toEqual({ root: '/', signals: ['rest-link'] })
    expect(
      wordpressOf(`<link rel="EditURI" type="application/rsd+xml" title="RSD" href="${ORIGIN}/xmlrpc.php?rsd" />`, url)?.signals,
    ).toEqual(['rsd-link'])
    expect(wordpressOf('<img src="/wp-content/uploads/2024/01/a.jpg">', url)?.signals).toEqual(['wp-assets'])
    expect(wordpressOf(wordpressFront(ORIGIN, false), url)?.signals.sort()).toEqual(['generator', 'rest-link', 'rsd-link', 'wp-assets'])
    expect(wordpressOf(SPA_HTML, url)).toBeNull()
    expect(wordpressOf('<p>We moved from WordPress; see /wp-content/ in our old blog.</p>', url)).toBeNull()
    expect(wordpressOf('<meta name="generator" content="Hugo 0.120" />', url)).toBeNull()
    expect(wordpressOf('<a href="https://other.example/wp-content/uploads/a.jpg">their photo</a>', url)).toBeNull()
    // WordPress's REST Link header, when a cache or minifier dropped the head's links.
    expect(wordpressOf('<p>', `${ORIGIN}/news/`, `<${ORIGIN}/news/wp-json/>; rel="https://api.w.org/"`)).toEqual({
      root: '/news/',
      signals: ['rest-header'],
    })
  })

  test('the WordPress root comes from the page links on its own host; a CDN leaves it at /', () => {
    const blog = `<link rel="EditURI" type="application/rsd+xml" href="${ORIGIN}/blog/xmlrpc.php?rsd" />`
    expect(wordpressOf(blog, `${ORIGIN}/blog/`)?.root).toBe('/blog/')
    expect(wordpressOf(`<link rel="https://api.w.org/" href="/news/index.php?rest_route=/" />`, `${ORIGIN}/news/`)?.root).toBe('/news/')
    expect(wordpressOf('<script src="https://cdn.example.net/site/wp-includes/js/x.js"></script>', `${ORIGIN}/`)?.root).toBe('/')
    // A REST prefix of its own (rest_url_prefix) names no root; the RSD link does.
    const custom = `<link rel="https://api.w.org/" href="${ORIGIN}/api/" /><link rel="EditURI" href="${ORIGIN}/site/xmlrpc.php?rsd" />`
    expect(wordpressOf(custom, `${ORIGIN}/site/`)?.root).toBe('/site/')
    expect(wordpressOf(`<link rel="https://api.w.org/" href="${ORIGIN}/api/" />`, `${ORIGIN}/`)?.root).toBe('/')
    const plan = planAppProbes(`${ORIGIN}/blog/`, { body: blog })
    expect(Object.values(plan.wordpress!.paths)).toContain('/blog/?rest_route=/wp/v2/users')
    expect(plan.base?.base).toBe('/blog/')
  })

  test('a DokuWiki or MediaWiki at the root (by its generator) gets the base-path probes under "/"; other root pages none', () => {
    const wiki = (g: string) => `<html><head><meta name="generator" content="${g}"></head><body></body></html>`
    for (const g of ['DokuWiki', 'MediaWiki 1.39.17']) {
      const plan = planAppProbes('http://h/doku.php?id=start', { body: wiki(g) })
      expect(plan.base).toEqual({
        base: '/',
        paths: {
          dokuwikiInstaller: '/install.php',
          phpMyAdminDocs: '/doc/html/index.html',
          mediawikiInstaller: '/mw-config/',
          composer: '/composer.json',
        },
      })
      // /composer.json is in PROBE_PATHS already: not sent twice.
      expect(appProbePaths(plan, PROBE_PATHS)).toEqual(['/install.php', '/doc/html/index.html', '/mw-config/'])
    }
    expect(planAppProbes('http://h/', { body: wiki('Hugo 0.120') }).base).toBeNull()
  })

  test("a wiki behind short URLs: its own script URLs name the directory, not the page's path", () => {
    const mediawiki = `<html><head><meta name="generator" content="MediaWiki 1.39.17">
      <link rel="stylesheet" href="/w/load.php?lang=en&amp;modules=site.styles&amp;only=styles">
      <link rel="EditURI" type="application/rsd+xml" href="//h/w/api.php?action=rsd"></head><body></body></html>`
    expect(planAppProbes('http://h/wiki/Main_Page', { body: mediawiki }).base?.paths.mediawikiInstaller).toBe('/w/mw-config/')
    expect(wikiRootOf(mediawiki, 'http://h/wiki/Help:Contents')).toBe('/w/')
    const dokuwiki = `<html><head><meta name="generator" content="DokuWiki"/>
      <script src="/dokuwiki/lib/exe/jquery.php?tseed=1" defer="defer"></script></head><body></body></html>`
    expect(planAppProbes('http://h/dokuwiki/ns/sub/page', { body: dokuwiki }).base?.paths.dokuwikiInstaller).toBe('/dokuwiki/install.php')
    // Another host's scripts say nothing of this one; without its own, the page's directory stands.
    const cdn = mediawiki.replaceAll('/w/', '//cdn.example/w/').replace('//h//cdn.example', '//cdn.example')
    expect(wikiRootOf(cdn, 'http://h/mediawiki/index.php/Main_Page')).toBe('/mediawiki/')
    // A generator that is not a wiki: the page's own directory, as for any site.
    expect(wikiRootOf('<meta name="generator" content="Hugo"><script src="/w/load.php"></script>', 'http://h/x/')).toBeNull()
  })

  test('the base path: the directory, cut before a script with more path after it; none at the root', () => {
    expect(basePathOf('http://h/dokuwiki/doku.php?id=start')).toBe('/dokuwiki/')
    expect(basePathOf('http://h/phpmyadmin/')).toBe('/phpmyadmin/')
    expect(basePathOf('http://h/mediawiki/index.php/Main_Page')).toBe('/mediawiki/')
    expect(basePathOf('http://h/index.php')).toBe('/')
    expect(basePathOf('http://h/')).toBe('/')
    expect(basePathOf('http://h/a/../b/')).toBe('/b/')
    expect(basePathOf(`http://h/${'x/'.repeat(20)}`)).toBe('/')
    expect(planAppProbes('http://h/', { body: '<p>' }).base).toBeNull()
  })

  test('at most APP_PROBE_BUDGET paths, none already in PROBE_PATHS, each once', () => {
    const plan = planAppProbes(`${ORIGIN}/blog/index.php`, { body: wordpressFront(`${ORIGIN}/blog`, true) })
    const paths = appProbePaths(plan, PROBE_PATHS)
    expect(paths.length).toBeLessThanOrEqual(APP_PROBE_BUDGET)
    expect(new Set(paths).size).toBe(paths.length)
    expect(paths.filter((p) => PROBE_PATHS.includes(p))).toEqual([])
  })
})

describe('the readers', () => {
  test('real bodies: readme.html, DokuWiki install.php, mw-config/, phpMyAdmin doc index', () => {
    expect(readWordPressReadme(REAL.wordpressReadme)).toEqual({ requiresPhp: '5.6.20', requiresMysql: '5.0' })
    expect(readDokuWikiInstaller(REAL.dokuwikiInstall)).toMatchObject({ setupForm: false })
    expect(readMediaWikiInstaller(REAL.mediawikiConfig)).toEqual({ version: '1.39.17' })
    expect(readPhpMyAdminDocs(REAL.phpMyAdminDocs)).toEqual({ version: '5.2.1' })
    for (const read of [readWordPressReadme, readDokuWikiInstaller, readMediaWikiInstaller, readPhpMyAdminDocs])
      expect(read(SPA_HTML)).toBeNull()
  })

  test('a user list: objects with id and slug, masked; an empty list or other JSON is none', () => {
    expect(readUserList(JSON.stringify(wordpressUsers(ORIGIN)))).toEqual({ count: 2, slugs: ['a***n', 'e***e'] })
    expect(readUserList('[]')).toBeNull()
    expect(readUserList('[{"id":1,"name":"x"}]')).toBeNull()
    expect(readUserList('{"code":"rest_no_route"}')).toBeNull()
    expect(maskName('jo')).toBe('j***')
  })

  test('?author=1: a redirect to /author/<slug>/ or the archive; a redirect home is none', () => {
    const p = (status: number, location?: string, body = ''): ProbeResult => ({
      ...probe('/?author=1', body, status),
      ...(location ? { location } : {}),
    })
    expect(readAuthorArchive(p(301, `${ORIGIN}/author/admin/`))).toEqual({ slug: 'a***n', via: 'redirect' })
    expect(readAuthorArchive(p(301, `${ORIGIN}/`))).toBeNull()
    expect(readAuthorArchive(p(200, undefined, '<body class="archive author author-admin author-1">'))).toEqual({
      slug: 'a***n',
      via: 'archive',
    })
    expect(readAuthorArchive(p(404, undefined, '<body class="archive author author-admin author-1">'))).toBeNull()
  })

  test('a DokuWiki installer that offers its form is high', () => {
    const offering = REAL.dokuwikiInstall.replace('<form action="" method="get">', '<form method="post"><input name="d[title]" />')
    expect(readDokuWikiInstaller(offering)).toMatchObject({ setupForm: true })
    const a = makeArtifacts({
      target: { url: `${ORIGIN}/wiki/doku.php`, finalUrl: `${ORIGIN}/wiki/doku.php` },
      probes: {
        [BASELINE_PROBE]: probe(BASELINE_PROBE, 'nope', 404),
        '/wiki/install.php': probe('/wiki/install.php', offering, 200, 'text/html'),
      },
    })
    const r = webAppExposure.run(a)
    expect([r.status, r.severity]).toEqual(['fail', 'high'])
  })
})

describe('web-app-exposure', () => {
  const wp = (probes: Record<string, ProbeResult>, baseline = probe(BASELINE_PROBE, 'not found', 404)) =>
    webAppExposure.run(
      makeArtifacts({ mainResponse: { body: wordpressFront(ORIGIN, true) }, probes: { [BASELINE_PROBE]: baseline, ...probes } }),
    )

  test('not WordPress and at the root: a pass that says nothing was asked', () => {
    expect(webAppExposure.run(makeArtifacts()).summary).toBe('Not WordPress, no base path: nothing to probe.')
  })

  test('WordPress whose probes all failed: skipped, not a pass', () => {
    const paths = Object.values(planAppProbes(`${ORIGIN}/`, { body: wordpressFront(ORIGIN, true) }).wordpress!.paths)
    const r = wp(Object.fromEntries(paths.map((p) => [p, { ...probe(p, ''), status: 0, error: 'timeout' }])))
    expect([r.status, r.summary]).toEqual(['skipped', 'Not applicable: the probes got no answer.'])
  })

  test('an SPA answering index.html for every path is no finding', () => {
    const spa = (p: string) => probe(p, SPA_HTML, 200, 'text/html')
    const paths = Object.values(planAppProbes(`${ORIGIN}/`, { body: wordpressFront(ORIGIN, true) }).wordpress!.paths)
    const r = wp(Object.fromEntries(paths.map((p) => [p, spa(p)])), spa(BASELINE_PROBE))
    expect(r.status).toBe('pass')
  })

  test('WP-Cron: a 200 with an empty body counts, unless the site answers that for anything', () => {
    const cron = probe('/wp-cron.php', '', 200, 'text/html')
    expect(wp({ '/wp-cron.php': cron }).summary).toContain('WP-Cron')
    expect(wp({ '/wp-cron.php': cron }, probe(BASELINE_PROBE, '', 200)).status).toBe('pass')
    expect(wp({ '/wp-cron.php': probe('/wp-cron.php', '', 403) }).status).toBe('pass')
  })

  test('evidence names what was read, never an e-mail address or a full name', () => {
    const users = wordpressUsers(ORIGIN).map((u) => ({ ...(u as object), email: 'jane@example.org' }))
    const r = wp({ '/wp-json/wp/v2/users': probe('/wp-json/wp/v2/users', JSON.stringify(users), 200, 'application/json') })
    expect(r.status).toBe('fail')
    expect(r.summary).toBe('https://example.com/wp-json/wp/v2/users lists 2 WordPress user(s) (a***n, e***e).')
    expect(JSON.stringify(r.evidence)).not.toMatch(/jane@|Editor Jane/)
  })

  test('the failing title names what the evidence shows, and reads any stored shape', () => {
    const title = (findings: unknown) => titleFor(webAppExposure, 'fail', { findings })
    expect(
      title([
        { app: 'WordPress', item: 'XML-RPC endpoint' },
        { app: 'WordPress', item: 'REST API user list' },
      ]),
    ).toBe('WordPress lists its users\u2019 login names to anyone')
    expect(title([{ app: 'WordPress', item: 'XML-RPC endpoint' }])).toBe('WordPress endpoints are exposed')
    expect(title([{ app: 'DokuWiki', item: 'installer (install.php)' }])).toBe('A web application\u2019s installer is still served')
    expect(title([{ app: 'phpMyAdmin', item: 'bundled documentation' }])).toBe('phpMyAdmin\u2019s bundled documentation is served')
    for (const odd of [null, 'x', [], [null], [{ item: 3 }]]) expect(title(odd)).toBe(webAppExposure.failTitle!)
  })
})
