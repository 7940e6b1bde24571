// A real crawl of a small site in Chromium, then the audit result built from its pages: findings merge by
// what they are about. One lane navigates one tab, so its cookie jar carries a cookie set on / to every
// later page; the cookie must still be a finding of / alone. One axe rule broken on three pages is one
// finding with those pages and their elements; scripts from two third-party hosts are one entry per host.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { crawlSite, type CrawledPage } from '../../../crawler/audit/crawl.ts'
import { BrowserPool, chromiumPath } from '../../../crawler/browser.ts'
import { buildAuditResult } from '../../../shared/report/audit-report.ts'
import { createLogger } from '../../../shared/lib/log.ts'
import { machineDeadline } from '../../harness/machine.ts'

const log = createLogger('warn')
const pool = new BrowserPool(chromiumPath(''), log)

/** A server for one script, on another host than the site: a third party. */
function scriptHost(hostname: string) {
  return Bun.serve({
    hostname,
    port: 0,
    fetch: () => new Response('window.loaded = (window.loaded || 0) + 1', { headers: { 'content-type': 'text/javascript' } }),
  })
}

describe('an audit of a real crawl merges findings by what they are about', () => {
  const one = scriptHost('127.0.0.1') // reached as localhost
  const two = scriptHost('127.0.0.2')
  const oneUrl = `http://localhost:${one.port}/t.js`
  const twoUrl = `http://127.0.0.2:${two.port}/w.js`
  const nav = '<nav><a href="/">Home</a> <a href="/a">A</a> <a href="/b">B</a> <a href="/c">C</a></nav>'
  const img = (id: string) => `<img src="/pics/${id}.png" id="${id}">` // no alt: axe's image-alt (critical)
  const pages: Record<string, { body: string; headers?: Record<string, string> }> = {
    '/': {
      body: `<main class="home">${nav}${img('hero')}<script src="${oneUrl}"></script></main>`,
      // A session-like cookie without HttpOnly, set on / only.
      headers: { 'set-cookie': 'sid=abc123; Path=/' },
    },
    '/a': {
      body: `<section class="a">${nav}${img('a1')}${img('a2')}<script src="${oneUrl}"></script><script src="${twoUrl}"></script></section>`,
    },
    '/b': {
      body: `<article class="b">${nav}${img('b1')}<script src="${twoUrl}"></script><script>document.cookie = 'theme=dark; path=/'</script></article>`,
    },
    '/c': { body: `<aside class="c">${nav}<p>No images, no scripts, no cookies.</p></aside>` },
  }
  const site = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req) {
      const path = new URL(req.url).pathname
      const p = pages[path]
      if (!p) return new Response('not found', { status: 404, headers: { 'content-type': 'text/plain' } })
      return new Response(`<!doctype html><html lang="en"><head><title>Page ${path}</title></head><body>${p.body}</body></html>`, {
        headers: { 'content-type': 'text/html; charset=utf-8', ...p.headers },
      })
    },
  })
  const origin = `http://127.0.0.1:${site.port}`
  const url = (path: string) => `${origin}${path}`
  let crawled: CrawledPage[] = []
  let stoppedBy = ''
  let result: ReturnType<typeof buildAuditResult>

  beforeAll(async () => {
    const stored: CrawledPage[] = []
    const summary = await crawlSite(
      {
        startUrl: url('/'),
        maxPages: 20,
        maxDepth: 3,
        maxDurationMs: 110_000,
        // One lane: every page after / is loaded in the same context, with sid in its jar.
        concurrency: 1,
        navTimeoutMs: 15_000,
        signal: new AbortController().signal,
      },
      { browser: pool, policy: { allowPrivate: true, trustedHosts: [] }, log, trustedSpki: [], probeTimeoutMs: 3_000 },
      { onDiscovered: () => {}, onPageStart: () => {}, onPage: async (p) => void stored.push(p) },
    )
    crawled = stored
    stoppedBy = summary.stoppedBy
    result = buildAuditResult(
      {
        auditId: 'aud_test',
        url: url('/'),
        stoppedBy: summary.stoppedBy,
        pagesDiscovered: summary.pagesDiscovered,
        finishedAt: new Date().toISOString(),
      },
      stored,
      summary.siteChecks,
    )
  }, machineDeadline(180_000))
  afterAll(async () => {
    await pool.close()
    for (const s of [site, one, two]) s.stop(true)
  })

  const findings = (checkId: string) => result.findings.filter((f) => f.checkId === checkId)
  const pagesOf = (f: { pages: string[] } | undefined) => [...(f?.pages ?? [])].sort()

  test('every page was crawled and says which cookies it set itself', () => {
    expect(stoppedBy).toBe('done')
    expect(crawled.map((p) => p.url).sort()).toEqual(['/', '/a', '/b', '/c'].map(url).sort())
    expect(crawled.every((p) => p.ok)).toBe(true)
    const set = Object.fromEntries(crawled.map((p) => [new URL(p.url).pathname, p.cookiesSet]))
    expect(set['/']).toContain('sid')
    expect(set['/b']).toEqual(['theme']) // set by its script
    expect(set['/a']).toEqual([])
    expect(set['/c']).toEqual([])
  })

  test('a cookie set only on / is a finding of / only, though every later page carried it', () => {
    const httpOnly = findings('cookie-httponly')
    expect(httpOnly.map((f) => f.subject)).toEqual([{ kind: 'cookie', key: 'sid' }])
    expect(httpOnly[0]).toMatchObject({ pageCount: 1, pages: [url('/')], status: 'fail' })
    // On an http site every cookie is a cookie-secure warning: one finding per cookie, each on its own page.
    const secure = findings('cookie-secure')
    expect(secure.map((f) => [f.subject?.key, f.pages]).sort()).toEqual([
      ['sid', [url('/')]],
      ['theme', [url('/b')]],
    ])
    expect(result.checks.find((c) => c.id === 'cookie-httponly')?.pagesAffected).toBe(1)
  })

  test("one axe rule broken on three pages is one finding listing them and each page's elements", () => {
    const alt = findings('accessibility').filter((f) => f.subject?.key === 'image-alt')
    expect(alt).toHaveLength(1)
    expect(pagesOf(alt[0])).toEqual(['/', '/a', '/b'].map(url).sort())
    expect(alt[0]!.pageCount).toBe(3)
    expect(alt[0]!.status).toBe('fail')
    const targets = Object.fromEntries(alt[0]!.targets!.map((t) => [new URL(t.page).pathname, t]))
    expect(targets['/']).toMatchObject({ nodes: 1, targets: ['#hero'] })
    expect(targets['/a']).toMatchObject({ nodes: 2 })
    expect([...targets['/a']!.targets].sort()).toEqual(['#a1', '#a2'])
    expect(targets['/b']).toMatchObject({ nodes: 1, targets: ['#b1'] })
    expect(alt[0]!.elements).toBe(4)
    // No other finding of the accessibility check is about image-alt.
    expect(findings('accessibility').filter((f) => f.summary.includes('image-alt')).length).toBe(1)
  })

  test('scripts from two third-party hosts are one entry per host with the pages that loaded them', () => {
    const byHost = Object.fromEntries(result.thirdParties.map((t) => [t.subject?.key, t]))
    expect(Object.keys(byHost).sort()).toEqual(['127.0.0.2', 'localhost'])
    expect(pagesOf(byHost.localhost)).toEqual(['/', '/a'].map(url).sort())
    expect(pagesOf(byHost['127.0.0.2'])).toEqual(['/a', '/b'].map(url).sort())
    expect(byHost.localhost!.evidence).toMatchObject({ host: 'localhost', types: { script: 2 } })
    expect(byHost.localhost!.status).toBe('info')
  })
})
