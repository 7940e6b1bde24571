// Report pages over HTTP against the real service (PostgreSQL, Redis, crawler workers and Chromium in one
// process) and real scans and audits of local fixture sites, started from the dashboard's forms:
//   - the owner's page (session cookie only: a bearer token is 401, another account's id is 404);
//   - sharing: /r/{slug} and its badge while shared, 404 once withdrawn, noindex, secrets still redacted;
//   - the badge: image/svg+xml, well-formed XML (libxml2 via xmllint-wasm), the score as text, short cache
//     with an ETag, colours dark enough for its white text;
//   - every action refuses a missing token, a foreign or missing Origin, and a bearer token.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { validateXML } from 'xmllint-wasm'
import { badgeSvg } from '../../api/report-pages/badge.ts'
import { FINDINGS_PER_PAGE, GRADE_COLOURS, PAGES_PER_PAGE } from '../../api/report-pages/pages.ts'
import { newId } from '../../shared/lib/ids.ts'
import { startAuditSite, type AuditSite } from '../fixtures/audit-site.ts'
import { weakSite, type Site } from '../fixtures/sites.ts'
import { jarFetch, signIn, startSignInService, type CookieJar, type SignInService } from '../harness/signin.ts'
import { until } from '../harness/wait.ts'

let svc: SignInService
let jar: CookieJar
let csrf: string
let accountId: string
let weak: Site
let site: AuditSite
/** A completed scan of the weak site, started from the dashboard's form. */
let scanId: string
/** A completed audit of the small site, started from the dashboard's form. */
let auditId: string

// Fabricated secrets the weak site serves (test/fixtures/sites.ts): no page may show them.
const SECRETS = ['sk_' + 'live_' + '51HqLyjWDarjtT1zdp7dcXQ2N8x', 'AKIA' + 'Z3MRQ7NPLX4TBV2K', 'hunter2', 'ghp_secret']

/** libxml2's parse of a document (its canonical form is asked for, so no schema is needed): errors, or []. */
async function xmlErrors(xml: string): Promise<string[]> {
  const r = await validateXML({ xml: [{ fileName: 'badge.svg', contents: xml }], normalization: 'c14n' })
  return r.valid ? [] : r.errors.map((e) => e.rawMessage)
}

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString()
const FORM = { 'content-type': 'application/x-www-form-urlencoded' }

/** A form post as the dashboard's pages make it: same Origin, the session's token in the csrf field. */
const post = (path: string, fields: Record<string, string> = {}, headers: Record<string, string> = {}) =>
  jarFetch(jar, `${svc.baseUrl}${path}`, {
    method: 'POST',
    headers: { ...FORM, origin: svc.baseUrl, ...headers },
    body: form({ csrf, ...fields }),
  })

const page = async (path: string) => {
  const res = await jarFetch(jar, `${svc.baseUrl}${path}`)
  return { res, html: await res.text() }
}

/** The finished JSON of a scan or audit, read through the dashboard route the pages poll. */
async function finished(kind: 'scans' | 'audits', id: string, ms: number) {
  return until(
    async () => {
      const s = await (await jarFetch(jar, `${svc.baseUrl}/api/${kind}/${id}`)).json()
      return s.status === 'completed' || s.status === 'failed' ? s : null
    },
    ms,
    `${kind} ${id} to finish`,
    { everyMs: 250 },
  )
}

async function share(kind: 'scans' | 'audits', id: string): Promise<string> {
  const res = await post(`/dashboard/${kind}/${id}/share`)
  expect(res.status).toBe(303)
  expect(res.headers.get('location')).toBe(`/dashboard/${kind}/${id}?notice=shared`)
  const { html } = await page(`/dashboard/${kind}/${id}?notice=shared`)
  expect(html).toContain('This report is now public')
  return /id="public-url" href="[^"]*\/r\/([^"/]+)"/.exec(html)![1]!
}

beforeAll(async () => {
  ;[weak, site] = [await weakSite(), startAuditSite({ pages: 4 })]
  svc = await startSignInService('production', {
    ROLE: 'all',
    TRUSTED_PROXY_HOPS: '1',
    WORKER_CONCURRENCY: '2',
    AUDIT_CONCURRENCY: '1',
    // Room for a machine busy with other work: a page that loads slowly is not what is tested here.
    NAV_TIMEOUT_MS: '20000',
    SCAN_TIMEOUT_MS: '90000',
  })
  jar = await signIn(svc)
  const { html } = await page('/dashboard')
  csrf = /name="csrf-token" content="([^"]+)"/.exec(html)![1]!
  const [row] = await svc.running.services.db.sql<{ account_id: string }[]>`SELECT account_id FROM users WHERE issuer = ${svc.idp.issuer}`
  accountId = row!.account_id

  const scan = await post('/dashboard/scans', { url: weak.url })
  expect(scan.status).toBe(303)
  scanId = /^\/dashboard\/scans\/(scn_\w+)$/.exec(scan.headers.get('location') ?? '')![1]!
  const audit = await post('/dashboard/audits', { url: site.url, maxPages: '4', maxDepth: '2' })
  expect(audit.status).toBe(303)
  auditId = /^\/dashboard\/audits\/(aud_\w+)$/.exec(audit.headers.get('location') ?? '')![1]!
  // The error, if any, shows in the failure.
  const outcome = async (kind: 'scans' | 'audits', id: string) => {
    const s = await finished(kind, id, 120_000)
    return { status: s.status, error: s.error ?? null }
  }
  expect(await outcome('scans', scanId)).toEqual({ status: 'completed', error: null })
  expect(await outcome('audits', auditId)).toEqual({ status: 'completed', error: null })
}, 260_000)

afterAll(async () => {
  await svc?.stop()
  await weak?.stop()
  await site?.stop()
})

describe("the owner's report page", () => {
  test('a scan: score and grade, findings by impact with evidence, the fix and how to verify it, no secret', async () => {
    const [row] = await svc.running.services.db.sql<{ score: number; grade: string }[]>`SELECT score, grade FROM scans WHERE id = ${scanId}`
    const { res, html } = await page(`/dashboard/scans/${scanId}`)
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toContain('no-store')
    expect(res.headers.get('x-frame-options')).toBe('DENY')
    expect(html).toContain(`<span class="score">${row!.score}</span>`)
    expect(html).toMatch(new RegExp(`<div class="grade g-\\w">${row!.grade.replace('+', '\\+')}</div>`))
    // The weak site fails many checks: each finding names its impact, shows its evidence, fix and verification.
    const findings = [...html.matchAll(/<details class="finding" data-check="([^"]+)"[\s\S]*?<\/details>/g)]
    expect(findings.length).toBeGreaterThan(3)
    const impacts = findings.map((f) => Number(/\(−(\d+) points/.exec(f[0])![1]))
    expect(impacts).toEqual([...impacts].sort((a, b) => b - a))
    for (const [f] of findings) {
      expect(f).toContain('<h4>Evidence</h4><pre class="evidence">')
      expect(f).toContain('<pre class="fix-change">')
      expect(f).toContain('<h4>How to verify</h4><pre class="fix-verify">')
    }
    expect(html).toContain('data-check="exposed-env-file"')
    expect(html).toContain('id="checks"')
    for (const secret of SECRETS) expect(html).not.toContain(secret)
    // Private until shared: the share form, no public link.
    expect(html).toContain('id="make-public"')
    expect(html).not.toContain('id="public-url"')
  })

  test('an audit: the pages table with every crawled page, the score, and no live section once ended', async () => {
    const { res, html } = await page(`/dashboard/audits/${auditId}`)
    expect(res.status).toBe(200)
    expect(html).toContain('id="score"')
    const table = /<section class="card" id="pages">([\s\S]*?)<\/section>/.exec(html)![1]!
    expect(table).toContain(`Pages (${site.pages.length})`)
    for (const url of site.pages) expect(table).toContain(`<code>${url}</code>`)
    expect(html).not.toContain('id="live"')
    expect(html).toMatch(/Found on \d+ pages?/)
  })

  test('the pages table and the findings are paginated, the links of each list keeping the page of the other', async () => {
    // A completed audit of many pages and findings: the real audit's result with its first page and first
    // finding repeated under other URLs and fingerprints.
    const sql = svc.running.services.db.sql
    type Result = { pages: Array<{ url: string }>; findings: Array<{ fingerprint: string; pages: string[] }> } & Record<string, unknown>
    const [a] = await sql<{ result: Result }[]>`SELECT result FROM audits WHERE id = ${auditId}`
    const [onePage, oneFinding] = [a!.result.pages[0]!, a!.result.findings[0]!]
    const total = PAGES_PER_PAGE * 2 + 7
    const pages = Array.from({ length: total }, (_, i) => ({ ...onePage, url: `${site.url}many/${i}`, finalUrl: `${site.url}many/${i}` }))
    const nFindings = FINDINGS_PER_PAGE + 3
    const findings = Array.from({ length: nFindings }, (_, i) => ({
      ...oneFinding,
      fingerprint: `${oneFinding.fingerprint}-${i}`,
      pages: [`${site.url}finding/${i}`],
    }))
    const id = newId('aud')
    await sql`INSERT INTO audits (id, account_id, app_id, url, options, charged_from, status, result, pages_discovered, pages_scanned, finished_at)
      SELECT ${id}, account_id, app_id, url, options, charged_from, 'completed', ${sql.json({ ...a!.result, auditId: id, pages, findings } as never)}, ${total}, ${total}, now()
      FROM audits WHERE id = ${auditId}`
    const rowsOf = (html: string) => [...html.matchAll(/<tr><td><code>[^<]*\/many\/(\d+)<\/code>/g)].map((m) => Number(m[1]))
    const findingsOf = (html: string) => [...html.matchAll(/<li><code>[^<]*\/finding\/(\d+)<\/code><\/li>/g)].map((m) => Number(m[1]))
    const range = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i)

    const first = (await page(`/dashboard/audits/${id}`)).html
    expect(first).toContain(`Pages (${total})`)
    expect(first).toContain('Page 1 of 3')
    expect(rowsOf(first)).toEqual(range(0, PAGES_PER_PAGE))
    expect(first).toContain(`href="/dashboard/audits/${id}?page=2#pages"`)
    expect(first).toContain(`Findings by impact (${nFindings})`)
    // Equal impact: the report orders them by fingerprint, so /finding/10 comes before /finding/2.
    const order = range(0, nFindings).sort((x, y) => findings[x]!.fingerprint.localeCompare(findings[y]!.fingerprint))
    expect(findingsOf(first)).toEqual(order.slice(0, FINDINGS_PER_PAGE))
    expect(first).toContain(`href="/dashboard/audits/${id}?findings=2#findings"`)

    const third = (await page(`/dashboard/audits/${id}?page=3&findings=2`)).html
    expect(third).toContain('Page 3 of 3')
    expect(rowsOf(third)).toEqual(range(PAGES_PER_PAGE * 2, 7))
    expect(findingsOf(third)).toEqual(order.slice(FINDINGS_PER_PAGE))
    // Each list's links keep the other list where it is.
    expect(third).toContain(`href="/dashboard/audits/${id}?findings=2&amp;page=2#pages"`)
    expect(third).toContain(`href="/dashboard/audits/${id}?page=3#findings"`)
    for (const odd of ['0', '-1', 'x', '1e3', '99']) {
      const html = (await page(`/dashboard/audits/${id}?page=${odd}&findings=${odd}`)).html
      expect(html).toMatch(/Page [13] of 3/)
      expect(findingsOf(html).length).toBeGreaterThan(0)
    }
  })

  test('a running audit shows its progress, polls its route, and links the live viewer', async () => {
    const sql = svc.running.services.db.sql
    const id = newId('aud')
    await sql`INSERT INTO audits (id, account_id, app_id, url, options, charged_from, status, pages_discovered, pages_scanned, current_url)
      SELECT ${id}, account_id, app_id, url, options, charged_from, 'running', 9, 4, ${`${site.url}page/2`} FROM audits WHERE id = ${auditId}`
    const { html } = await page(`/dashboard/audits/${id}`)
    expect(html).toContain(`id="live" data-poll="/api/audits/${id}"`)
    expect(html).toContain('<span class="pages-scanned">4</span> of <span class="pages-discovered">9</span>')
    expect(html).toContain('id="watch-live"')
    expect(html).not.toContain('id="share"')
    // The viewer form makes a fresh viewer link for the owner.
    const viewer = await post(`/dashboard/audits/${id}/viewer`)
    expect(viewer.status).toBe(303)
    const link = new URL(viewer.headers.get('location')!)
    expect(link.pathname).toBe(`/viewer/${id}`)
    expect(link.hash.length).toBeGreaterThan(20)
    // A completed audit's crawl is over: no viewer link is made.
    expect((await post(`/dashboard/audits/${auditId}/viewer`)).status).toBe(409)
  })

  test("the live viewer's end page links to the audit's report page", async () => {
    const res = await fetch(`${svc.baseUrl}/viewer/${auditId}`)
    const html = await res.text()
    const ended = /<section id="ended"[\s\S]*?<\/section>/.exec(html)![0]
    expect(ended).toContain(`href="/dashboard/audits/${auditId}"`)
    expect(html).not.toContain('get_audit')
  })

  test('a bearer token is 401, even next to a valid session; signed out is sent to sign in', async () => {
    const key = await svc.key()
    for (const path of [`/dashboard/scans/${scanId}`, `/dashboard/audits/${auditId}`]) {
      const res = await jarFetch(jar, `${svc.baseUrl}${path}`, { headers: { authorization: `Bearer ${key}` } })
      expect(res.status).toBe(401)
      expect((await res.json()).error).toBe('bearer_not_accepted')
      const out = await fetch(`${svc.baseUrl}${path}`, { redirect: 'manual' })
      expect(out.status).toBe(302)
      expect(out.headers.get('location')).toBe(`/auth/login?return_to=${encodeURIComponent(path)}`)
    }
    const shareWithBearer = await post(`/dashboard/scans/${scanId}/share`, {}, { authorization: `Bearer ${key}` })
    expect(shareWithBearer.status).toBe(401)
  })

  test("another account's scan or audit is 404, like one that does not exist, and cannot be shared", async () => {
    const other = await svc.extraSession('mallory')
    const as = (path: string, init: RequestInit = {}) =>
      fetch(`${svc.baseUrl}${path}`, { ...init, redirect: 'manual', headers: { cookie: `aa_session=${other.cookie}`, ...init.headers } })
    for (const path of [
      `/dashboard/scans/${scanId}`,
      `/dashboard/audits/${auditId}`,
      '/dashboard/scans/scn_nosuchscan0000000000',
      '/dashboard/audits/not-an-id',
    ]) {
      expect((await as(path)).status).toBe(404)
    }
    const res = await as(`/dashboard/scans/${scanId}/share`, {
      method: 'POST',
      headers: { ...FORM, origin: svc.baseUrl },
      body: form({ csrf: other.csrfToken }),
    })
    expect(res.status).toBe(404)
    const [n] = await svc.running.services.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM report_shares WHERE scan_id = ${scanId}`
    expect(n!.n).toBe(0)
  })
})

describe('sharing', () => {
  test('share: /r/{slug} shows the report to anyone, noindex, without secrets or owner controls', async () => {
    const slug = await share('scans', scanId)
    expect(slug).toMatch(/^[0-9A-Za-z]{22}$/)
    expect(slug).not.toContain(scanId.slice(4))
    const res = await fetch(`${svc.baseUrl}/r/${slug}`)
    expect(res.status).toBe(200)
    expect(res.headers.get('x-robots-tag')).toContain('noindex')
    expect(res.headers.get('referrer-policy')).toBe('no-referrer')
    expect(res.headers.get('cache-control')).toContain('no-store')
    expect(res.headers.get('x-frame-options')).toBe('DENY')
    const html = await res.text()
    expect(html).toContain('<meta name="robots" content="noindex')
    const [row] = await svc.running.services.db.sql<{ score: number }[]>`SELECT score FROM scans WHERE id = ${scanId}`
    expect(html).toContain(`<span class="score">${row!.score}</span>`)
    expect(html).toContain('data-check="exposed-env-file"')
    for (const secret of SECRETS) expect(html).not.toContain(secret)
    for (const ownerOnly of ['csrf', 'make-public', 'withdraw', 'sign-out', accountId]) expect(html).not.toContain(ownerOnly)
    // Sharing twice keeps one link.
    expect(await share('scans', scanId)).toBe(slug)
  })

  test('the badge: image/svg+xml, well-formed XML with the score, a short cache and an ETag', async () => {
    const slug = await share('scans', scanId)
    const [row] = await svc.running.services.db.sql<{ score: number; grade: string }[]>`SELECT score, grade FROM scans WHERE id = ${scanId}`
    const res = await fetch(`${svc.baseUrl}/r/${slug}/badge`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toStartWith('image/svg+xml')
    const cache = res.headers.get('cache-control')!
    const maxAge = Number(/max-age=(\d+)/.exec(cache)![1])
    expect(maxAge).toBeGreaterThan(0)
    expect(maxAge).toBeLessThanOrEqual(600)
    const etag = res.headers.get('etag')!
    expect(etag).toMatch(/^"[^"]+"$/)
    expect(res.headers.get('x-robots-tag')).toContain('noindex')
    const svg = await res.text()
    expect(await xmlErrors(svg)).toEqual([])
    expect(await xmlErrors(svg.replace('</g>', ''))).not.toEqual([])
    expect(svg).toStartWith('<svg xmlns="http://www.w3.org/2000/svg"')
    expect(svg).toContain(`>${row!.score} ${row!.grade}</text>`)
    expect(svg).toContain(`fill="${GRADE_COLOURS[row!.grade[0]!.toLowerCase() as keyof typeof GRADE_COLOURS]}"`)
    // A revalidation with the ETag costs nothing; another ETag gets the badge again.
    const again = await fetch(`${svc.baseUrl}/r/${slug}/badge`, { headers: { 'if-none-match': etag } })
    expect(again.status).toBe(304)
    expect(again.headers.get('etag')).toBe(etag)
    expect(await again.text()).toBe('')
    expect((await fetch(`${svc.baseUrl}/r/${slug}/badge`, { headers: { 'if-none-match': '"other"' } })).status).toBe(200)
  })

  test('an audit shares the same way, its badge from the audit score', async () => {
    const slug = await share('audits', auditId)
    const [row] = await svc.running.services.db.sql<{ score: number; grade: string }[]>`
      SELECT (result->>'score')::int AS score, result->>'grade' AS grade FROM audits WHERE id = ${auditId}`
    const html = await (await fetch(`${svc.baseUrl}/r/${slug}`)).text()
    expect(html).toContain(`<span class="score">${row!.score}</span>`)
    expect(html).toContain('id="pages"')
    const svg = await (await fetch(`${svc.baseUrl}/r/${slug}/badge`)).text()
    expect(svg).toContain(`>${row!.score} ${row!.grade}</text>`)
  })

  test('withdraw: the page and the badge answer 404; sharing again makes a new slug', async () => {
    const slug = await share('scans', scanId)
    const res = await post(`/dashboard/scans/${scanId}/unshare`)
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe(`/dashboard/scans/${scanId}?notice=withdrawn`)
    for (const path of [`/r/${slug}`, `/r/${slug}/badge`]) {
      const gone = await fetch(`${svc.baseUrl}${path}`)
      expect(gone.status).toBe(404)
      expect(gone.headers.get('x-robots-tag')).toContain('noindex')
      expect(gone.headers.get('content-type')).not.toContain('svg')
    }
    const { html } = await page(`/dashboard/scans/${scanId}`)
    expect(html).toContain('id="make-public"')
    const again = await share('scans', scanId)
    expect(again).not.toBe(slug)
    expect((await fetch(`${svc.baseUrl}/r/${slug}`)).status).toBe(404)
    expect((await fetch(`${svc.baseUrl}/r/${again}/badge`)).status).toBe(200)
  })

  test('an unknown or malformed slug is 404, page and badge alike', async () => {
    // (A path that is not even valid percent-encoding, such as /r/%ZZ, is a 400 before any route: api/app.ts.)
    for (const slug of [
      'A'.repeat(22),
      'abc',
      'A'.repeat(23),
      '..%2F..%2Fetc',
      '%25ZZ',
      `${'a'.repeat(21)}%21`,
      `${'a'.repeat(21)}!`,
      scanId,
    ]) {
      for (const path of [`/r/${slug}`, `/r/${slug}/badge`]) {
        const res = await fetch(`${svc.baseUrl}${path}`)
        expect(res.status).toBe(404)
        expect(res.headers.get('x-robots-tag')).toContain('noindex')
      }
    }
  })

  test('a report still running cannot be shared', async () => {
    const sql = svc.running.services.db.sql
    const id = newId('scn')
    await sql`INSERT INTO scans (id, account_id, app_id, url, status) SELECT ${id}, account_id, app_id, url, 'running' FROM scans WHERE id = ${scanId}`
    expect((await post(`/dashboard/scans/${id}/share`)).status).toBe(409)
    const [n] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM report_shares WHERE scan_id = ${id}`
    expect(n!.n).toBe(0)
  })
})

describe('CSRF: every action needs the token and this site as Origin', () => {
  const cases: Array<[string, (path: string) => Promise<Response>]> = [
    ['no token', (path) => jarFetch(jar, `${svc.baseUrl}${path}`, { method: 'POST', headers: { ...FORM, origin: svc.baseUrl }, body: '' })],
    ['a wrong token', (path) => post(path, { csrf: 'x'.repeat(43) })],
    ['a foreign Origin', (path) => post(path, {}, { origin: 'https://evil.example' })],
    ['no Origin', (path) => jarFetch(jar, `${svc.baseUrl}${path}`, { method: 'POST', headers: FORM, body: form({ csrf, url: weak.url }) })],
  ]
  test.each(cases)('%s: refused with 403 and nothing done', async (_, send) => {
    const sql = svc.running.services.db.sql
    const count = async () =>
      (
        await sql<
          { n: number }[]
        >`SELECT (SELECT count(*) FROM scans) + (SELECT count(*) FROM audits) + (SELECT count(*) FROM report_shares) AS n`
      )[0]!.n
    const before = await count()
    for (const path of [
      `/dashboard/scans/${scanId}/share`,
      `/dashboard/audits/${auditId}/share`,
      '/dashboard/scans',
      '/dashboard/audits',
    ]) {
      expect((await send(path)).status).toBe(403)
    }
    const [shared] = await sql<
      { n: number }[]
    >`SELECT count(*)::int AS n FROM report_shares WHERE scan_id = ${scanId} OR audit_id = ${auditId}`
    // The withdraw test shared the scan again and the audit test shared the audit: still exactly those two.
    expect(shared!.n).toBe(2)
    expect(await count()).toBe(before)
  })

  test('a withdraw without the token leaves the report shared', async () => {
    const slug = await share('audits', auditId)
    const res = await jarFetch(jar, `${svc.baseUrl}/dashboard/audits/${auditId}/unshare`, {
      method: 'POST',
      headers: { ...FORM, origin: svc.baseUrl },
      body: '',
    })
    expect(res.status).toBe(403)
    expect((await fetch(`${svc.baseUrl}/r/${slug}`)).status).toBe(200)
  })
})

describe('the dashboard', () => {
  test('links every scan and audit to its report page and shows their scores', async () => {
    const sql = svc.running.services.db.sql
    const [s] = await sql<{ score: number; grade: string }[]>`SELECT score, grade FROM scans WHERE id = ${scanId}`
    const [a] = await sql<{ score: number; grade: string }[]>`
      SELECT (result->>'score')::int AS score, result->>'grade' AS grade FROM audits WHERE id = ${auditId}`
    const { html } = await page('/dashboard')
    const scanRow = new RegExp(`<tr data-scan="${scanId}"[\\s\\S]*?</tr>`).exec(html)![0]
    expect(scanRow).toContain(`href="/dashboard/scans/${scanId}"`)
    expect(scanRow).toContain(`<td class="score">${s!.score} ${s!.grade}</td>`)
    const auditRow = new RegExp(`<tr data-audit="${auditId}"[\\s\\S]*?</tr>`).exec(html)![0]
    expect(auditRow).toContain(`href="/dashboard/audits/${auditId}"`)
    expect(auditRow).toContain(`<td class="score">${a!.score} ${a!.grade}</td>`)
  })

  test('the start forms say what is wrong with a URL, keep what was typed, and start nothing', async () => {
    const sql = svc.running.services.db.sql
    const before = (await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM scans`)[0]!.n
    const empty = await post('/dashboard/scans', { url: '  ' })
    expect(empty.status).toBe(400)
    expect(await empty.text()).toContain('Enter the URL of a page')
    const bad = await post('/dashboard/scans', { url: 'ftp://files.example/' })
    expect(bad.status).toBe(400)
    const badHtml = await bad.text()
    expect(badHtml).toContain('id="start-error"')
    expect(badHtml).toContain('value="ftp://files.example/"')
    const pages = await post('/dashboard/audits', { url: site.url, maxPages: '100000' })
    expect(pages.status).toBe(400)
    expect(await pages.text()).toContain('maxPages must be a whole number from 1 to 500')
    const big = await post('/dashboard/scans', { url: `https://app.example/${'a'.repeat(10_000)}` })
    expect(big.status).toBe(413)
    expect((await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM scans`)[0]!.n).toBe(before)
  })
})

describe('the badge as an image', () => {
  // Relative luminance and contrast ratio as WCAG 2 defines them.
  const luminance = (hex: string) => {
    const [r, g, b] = [1, 3, 5].map((i) => {
      const c = Number.parseInt(hex.slice(i, i + 2), 16) / 255
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4
    })
    return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!
  }
  const contrast = (a: string, b: string) => {
    const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x)
    return (hi! + 0.05) / (lo! + 0.05)
  }

  test.each(['A+', 'B-', 'C', 'D', 'F', null])('grade %p: white text on its colour has at least 4.5:1 contrast', async (grade) => {
    const svg = badgeSvg(grade ? 61 : null, grade)
    expect(await xmlErrors(svg)).toEqual([])
    expect(svg).toContain(grade ? `>61 ${grade}</text>` : '>pending</text>')
    const fill = /<rect x="\d+" width="\d+" height="20" fill="(#[0-9a-f]{6})"\/>/.exec(svg)![1]!
    expect(contrast(fill, '#ffffff')).toBeGreaterThanOrEqual(4.5)
    expect(svg).toContain('<g fill="#fff"')
  })
})
