// monitor_app, /api/cron/monitors, get_account and the dashboard on the real service in production mode
// (PostgreSQL, Redis, a crawler with Chromium in the same process), against a local site whose headers a
// test changes between runs. A monitor is made due by moving its next_run_at with SQL, never by waiting.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { randomBytes } from 'node:crypto'
import { defaultSlot, MONITORS_PER_PLAN } from '../../api/monitors/service.ts'
import { createApiKey } from '../../shared/db/accounts.ts'
import type { Sql } from '../../shared/db/index.ts'
import { claimDueMonitors } from '../../shared/db/monitor-runs.ts'
import { connectClient, payload } from '../harness/client.ts'
import { startService } from '../harness/service.ts'
import { type SignInService, startSignInService } from '../harness/signin.ts'
import { within } from '../harness/wait.ts'
import { machineDeadline } from '../harness/machine.ts'

const SECRET = `cron-${randomBytes(24).toString('hex')}`

const GOOD = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; object-src 'none'; base-uri 'self'; frame-ancestors 'none'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'strict-origin-when-cross-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=()',
}
const BAD = { server: 'nginx/1.18.0 (Ubuntu)', 'x-powered-by': 'Express' }

/** A one-page site whose response headers a test sets between scans. */
function switchableSite() {
  let headers: Record<string, string> = GOOD
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: () =>
      new Response('<!doctype html><html lang="en"><head><title>Monitored app</title></head><body><h1>Monitored</h1></body></html>', {
        headers: { 'content-type': 'text/html; charset=utf-8', ...headers },
      }),
  })
  return {
    url: `http://127.0.0.1:${server.port}/`,
    serve: (h: Record<string, string>) => void (headers = h),
    stop: () => server.stop(true),
  }
}

let svc: SignInService
let sql: Sql
const clients: Client[] = []
const site = switchableSite()
const liveSites: Array<ReturnType<typeof switchableSite>> = []
/** A site of its own (a new origin) that answers, for a monitor to be created on. */
function liveUrl(): string {
  const s = switchableSite()
  liveSites.push(s)
  return s.url
}

beforeAll(async () => {
  svc = await startSignInService('production', { ROLE: 'all', CRON_SECRET: SECRET })
  sql = svc.running.services.db.sql
}, machineDeadline(60_000))
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {})
  for (const s of liveSites) s.stop()
  await svc?.stop()
  site.stop()
})

/** An MCP client of a new account of the plan (or of `accountId`). */
async function clientOf(plan: 'free' | 'launch', accountId?: string) {
  const key = accountId ? (await createApiKey(sql, accountId)).plaintext : await svc.key(plan)
  const client = await connectClient(svc.mcpUrl, key)
  clients.push(client)
  const call = async (name: string, args: Record<string, unknown>) => {
    const r = await within(client.callTool({ name, arguments: args }), 30_000, name)
    return { isError: r.isError === true, body: payload(r) }
  }
  return {
    monitor: (args: Record<string, unknown>) => call('monitor_app', args),
    account: async () => (await call('get_account', {})).body,
  }
}

const cron = async () => {
  const res = await within(
    fetch(`${svc.url}/api/cron/monitors`, { method: 'POST', headers: { authorization: `Bearer ${SECRET}` } }),
    100_000,
    'the monitors job',
  )
  expect(res.status).toBe(200)
  return (await res.json()) as Record<string, number | boolean | string>
}
const makeDue = (monitorId: string) => sql`UPDATE monitors SET next_run_at = now() - interval '1 minute' WHERE id = ${monitorId}`
const runsOf = (monitorId: string) => sql<any[]>`SELECT * FROM monitor_runs WHERE monitor_id = ${monitorId} ORDER BY created_at, id`

describe('monitor_app', () => {
  test('a free account is refused with plan_required and nothing is stored', async () => {
    const free = await clientOf('free')
    const r = await free.monitor({ url: 'http://127.0.0.1:1/', schedule: 'daily' })
    expect(r.isError).toBe(true)
    expect(r.body.error).toMatchObject({ code: 'plan_required', requiredPlan: 'launch', currentPlan: 'free' })
    expect((await sql`SELECT 1 FROM monitors m JOIN apps a ON a.id = m.app_id WHERE a.origin = 'http://127.0.0.1:1'`).length).toBe(0)
  })

  test('creates one monitor per app at a stable hour, updates it when called again, and keeps what a call leaves out', async () => {
    const c = await clientOf('launch')
    const url = liveUrl()
    const created = await c.monitor({ url, schedule: 'daily' })
    expect(created.isError).toBe(false)
    expect(created.body).toMatchObject({ created: true, url, schedule: 'daily', weekday: null, notifyOn: 'regression', enabled: true })
    expect(created.body.hour).toBe(defaultSlot(url).hour)
    const next = new Date(created.body.nextRunAt)
    expect(next.getUTCHours()).toBe(created.body.hour)
    expect(next.getUTCMinutes()).toBe(0)
    expect(next.getTime() - Date.now()).toBeGreaterThan(0)
    expect(next.getTime() - Date.now()).toBeLessThanOrEqual(86_400_000)

    const weekly = { url, schedule: 'weekly', weekday: 1, hour: 9, notifyOn: 'any' }
    const updated = await c.monitor(weekly)
    expect(updated.body).toMatchObject({ created: false, changed: true, monitorId: created.body.monitorId, weekday: 1, hour: 9 })
    const monday = new Date(updated.body.nextRunAt)
    expect([monday.getUTCDay(), monday.getUTCHours()]).toEqual([1, 9])
    expect(monday.getTime() - Date.now()).toBeLessThanOrEqual(7 * 86_400_000)
    const again = await c.monitor(weekly)
    expect(again.body).toMatchObject({ changed: false, nextRunAt: updated.body.nextRunAt, updatedAt: updated.body.updatedAt })

    // Another page of the same app, paused: the schedule and notifyOn stay as they were.
    const paused = await c.monitor({ url: `${url}pricing`, enabled: false })
    expect(paused.body).toMatchObject({
      monitorId: created.body.monitorId,
      url: `${url}pricing`,
      schedule: 'weekly',
      weekday: 1,
      hour: 9,
      notifyOn: 'any',
      enabled: false,
      nextRunAt: null,
    })
    const account = await c.account()
    expect(account.usage.monitors).toBe(1)
    expect(account.monitors).toEqual([
      expect.objectContaining({ monitorId: created.body.monitorId, enabled: false, nextRunAt: null, lastScore: null, openRegressions: 0 }),
    ])
    const resumed = await c.monitor({ url, enabled: true })
    expect(new Date(resumed.body.nextRunAt).getUTCDay()).toBe(1)
  })

  test.each([
    [
      'a weekday on a daily schedule (invalid_params)',
      { url: 'http://127.0.0.1:3/', schedule: 'daily', weekday: 3 },
      'invalid_params',
      '/weekday',
    ],
    ['no schedule for an app without a monitor (invalid_params)', { url: 'http://127.0.0.1:3/' }, 'invalid_params', '/schedule'],
    ['an hour past 23 (invalid_params)', { url: 'http://127.0.0.1:3/', schedule: 'daily', hour: 24 }, 'invalid_params', '/hour'],
    [
      'remove with other arguments (invalid_params)',
      { url: 'http://127.0.0.1:3/', remove: true, enabled: false },
      'invalid_params',
      '/enabled',
    ],
    ['a URL that is not http(s) (invalid_url)', { url: 'ftp://127.0.0.1/', schedule: 'daily' }, 'invalid_url', undefined],
  ])('%s is refused and stores nothing', async (_what, args, code, path) => {
    const c = await clientOf('launch')
    const r = await c.monitor(args)
    expect(r.isError).toBe(true)
    expect(r.body.error.code).toBe(code)
    if (path) expect(r.body.error.details.map((d: { path: string }) => d.path)).toContain(path)
    // Neither a monitor nor an app: a refused call leaves no trace.
    expect((await c.account()).usage).toMatchObject({ monitors: 0, apps: 0 })
  })

  test('a site where nothing answers gets no monitor and no app; pausing a monitor of a site that went away still works', async () => {
    const c = await clientOf('launch')
    const gone = switchableSite()
    const url = gone.url
    gone.stop()
    const r = await c.monitor({ url, schedule: 'daily' })
    expect(r.isError).toBe(true)
    expect(r.body.error.code).toBe('target_unreachable')
    expect(r.body.error.message).toContain('no monitor was saved')
    expect((await c.account()).usage).toMatchObject({ monitors: 0, apps: 0 })
    const live = switchableSite()
    expect((await c.monitor({ url: live.url, schedule: 'daily' })).isError).toBe(false)
    live.stop()
    expect((await c.monitor({ url: live.url, enabled: false })).body).toMatchObject({ enabled: false })
  })

  test("the plan's monitors are a cap: one more is refused, stores no app, and an update of one kept still works", async () => {
    const c = await clientOf('launch')
    const urls = Array.from({ length: MONITORS_PER_PLAN.launch }, () => liveUrl())
    for (const url of urls) expect((await c.monitor({ url, schedule: 'weekly' })).isError).toBe(false)
    const over = await c.monitor({ url: liveUrl(), schedule: 'weekly' })
    expect(over.isError).toBe(true)
    expect(over.body.error).toMatchObject({ code: 'plan_required', requiredPlan: 'scale', limit: MONITORS_PER_PLAN.launch })
    expect((await c.account()).usage).toMatchObject({ monitors: MONITORS_PER_PLAN.launch, apps: MONITORS_PER_PLAN.launch })
    expect((await c.monitor({ url: urls[0], schedule: 'daily' })).body).toMatchObject({ changed: true, schedule: 'daily' })
  }, 120_000)

  test('remove: true deletes the monitor, and removing it again answers removed: false', async () => {
    const c = await clientOf('launch')
    const url = liveUrl()
    const origin = new URL(url).origin
    await c.monitor({ url, schedule: 'weekly' })
    expect((await c.monitor({ url: `${url}any/page`, remove: true })).body).toEqual({ origin, removed: true })
    expect((await c.monitor({ url, remove: true })).body).toEqual({ origin, removed: false })
    const account = await c.account()
    expect([account.usage.monitors, account.monitors]).toEqual([0, []])
  })
})

describe('/api/cron/monitors', () => {
  test('two claims racing without the cron lease take each due monitor once', async () => {
    const c = await clientOf('launch')
    const ids: string[] = []
    for (let i = 0; i < 3; i++) ids.push((await c.monitor({ url: liveUrl(), schedule: 'daily' })).body.monitorId)
    for (const id of ids) await makeDue(id)
    const [a, b] = await Promise.all([claimDueMonitors(sql, 50), claimDueMonitors(sql, 50)])
    const claimed = [...a, ...b].map((m) => m.id).filter((id) => ids.includes(id))
    expect(claimed.sort()).toEqual([...ids].sort())
    const next = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM monitors WHERE id IN ${sql(ids)} AND next_run_at > now()`
    expect(next[0]!.n).toBe(3)
  })

  test("accounts take turns: one account's many due monitors do not hold back another's", async () => {
    const notDue = () => sql`UPDATE monitors SET next_run_at = now() + interval '1 day' WHERE next_run_at <= now()`
    await notDue() // what earlier tests left due would take turns too
    const busy = await clientOf('launch')
    const quiet = await clientOf('launch')
    const many: string[] = []
    for (let i = 0; i < 6; i++) many.push((await busy.monitor({ url: liveUrl(), schedule: 'daily' })).body.monitorId)
    const one = (await quiet.monitor({ url: liveUrl(), schedule: 'daily' })).body.monitorId
    // The busy account's monitors are the most overdue; the quiet one's became due last.
    for (const id of many) await sql`UPDATE monitors SET next_run_at = now() - interval '2 hours' WHERE id = ${id}`
    await makeDue(one)
    const claimed = (await claimDueMonitors(sql, 3)).map((m) => m.id)
    expect(claimed).toContain(one)
    expect(claimed.filter((id) => many.includes(id))).toHaveLength(2)
    await notDue()
  })

  test('runs a due monitor once when called twice at once: one scan, one run, compared with nothing the first time', async () => {
    const other = switchableSite()
    try {
      const c = await clientOf('launch')
      const m = (await c.monitor({ url: other.url, schedule: 'daily' })).body
      await makeDue(m.monitorId)
      const answers = await Promise.all([cron(), cron()])
      const ran = answers.filter((r) => !r.skipped)
      expect(ran.reduce((n, r) => n + Number(r.started), 0)).toBe(1)
      const scans = await sql`SELECT id FROM scans WHERE url = ${other.url}`
      expect(scans.length).toBe(1)
      const runs = await runsOf(m.monitorId)
      expect(
        runs.map((r) => ({ scan: r.scan_id, status: r.status, previous: r.previous_score, regressions: r.regressions, alert: r.alert })),
      ).toEqual([{ scan: scans[0]!.id, status: 'completed', previous: null, regressions: [], alert: false }])
      expect(runs[0]!.score).toBeGreaterThan(0)
      // Not due any more: another call starts nothing.
      expect(await cron()).toMatchObject({ job: 'monitors', due: 0, started: 0 })
    } finally {
      other.stop()
    }
  }, 120_000)
})

describe('regressions, get_account and the dashboard', () => {
  let owner: { cookie: string; csrfToken: string; accountId: string }
  let c: Awaited<ReturnType<typeof clientOf>>
  let monitorId: string
  beforeAll(async () => {
    owner = await svc.extraSession(`owner-${randomBytes(4).toString('hex')}`)
    await sql`UPDATE accounts SET plan = 'launch' WHERE id = ${owner.accountId}`
    c = await clientOf('launch', owner.accountId)
  })
  const page = async () => {
    const res = await fetch(`${svc.baseUrl}/dashboard`, { headers: { cookie: `aa_session=${owner.cookie}` } })
    expect(res.status).toBe(200)
    return res.text()
  }
  const act = (verb: string, opts: { csrf?: string; cookie?: string; id?: string } = {}) =>
    fetch(`${svc.baseUrl}/dashboard/api/monitors/${opts.id ?? monitorId}/${verb}`, {
      method: 'POST',
      headers: { cookie: `aa_session=${opts.cookie ?? owner.cookie}`, origin: svc.baseUrl, 'x-csrf-token': opts.csrf ?? owner.csrfToken },
    })

  test('records a regression when the site serves worse headers on the next run, and get_account counts it', async () => {
    site.serve(GOOD)
    monitorId = (await c.monitor({ url: site.url, schedule: 'daily' })).body.monitorId
    await makeDue(monitorId)
    expect(await cron()).toMatchObject({ started: 1, pending: 0 })
    site.serve(BAD)
    await makeDue(monitorId)
    expect(await cron()).toMatchObject({ started: 1, alerts: 1, pending: 0 })

    const [first, second] = await runsOf(monitorId)
    expect(second.status).toBe('completed')
    expect(second.previous_score).toBe(first.score)
    expect(second.score).toBeLessThan(first.score)
    expect(second.alert).toBe(true)
    expect(second.regressions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: 'score', from: first.score, to: second.score, resolvedAt: null }),
        expect.objectContaining({ kind: 'check', checkId: 'csp', from: 'pass', to: 'fail' }),
        expect.objectContaining({ kind: 'check', checkId: 'x-content-type-options', from: 'pass', to: 'fail' }),
      ]),
    )
    expect(second.open_regressions).toBe(second.regressions.length)

    const account = await c.account()
    expect(account.monitors).toEqual([
      expect.objectContaining({ monitorId, url: site.url, schedule: 'daily', enabled: true, lastScore: second.score }),
    ])
    expect(account.monitors[0].openRegressions).toBe(second.open_regressions)
    expect(new Date(account.monitors[0].lastRunAt).getTime()).toBeGreaterThan(Date.now() - 120_000)
    expect(new Date(account.monitors[0].nextRunAt).getTime()).toBeGreaterThan(Date.now())
  }, 150_000)

  test("the dashboard shows the app's monitor with its runs, scores and open regressions", async () => {
    const html = await page()
    const [first, second] = await runsOf(monitorId)
    expect(html).toContain(`data-monitor="${monitorId}"`)
    expect(html).toContain('<h4>Open regressions</h4>')
    expect(html).toContain('csp: pass → fail')
    expect(html).toContain(`${first.score} → ${second.score}`)
    expect(html).toContain(`data-run="${first.id}"`)
    // Each run's time links to the report of the scan it made.
    expect(html).toContain(`<a href="/dashboard/scans/${second.scan_id}">`)
    expect(html).toContain('data-verb="pause"')
  })

  test('a later scan that no longer shows the regression resolves it', async () => {
    site.serve(GOOD)
    await makeDue(monitorId)
    expect(await cron()).toMatchObject({ started: 1, pending: 0 })
    const [, second, third] = await runsOf(monitorId)
    expect(second.open_regressions).toBe(0)
    expect(second.regressions.every((r: { resolvedByScanId: string }) => r.resolvedByScanId === third.scan_id)).toBe(true)
    expect(third.improvements).toEqual(expect.arrayContaining([expect.objectContaining({ kind: 'check', checkId: 'csp', to: 'pass' })]))
    // notifyOn 'regression': an improvement is recorded but is no alert.
    expect([third.alert, third.regressions]).toEqual([false, []])
    expect((await c.account()).monitors[0].openRegressions).toBe(0)
    expect(await page()).not.toContain('<h4>Open regressions</h4>')
  }, 120_000)

  test('pause, resume and remove from the dashboard need the anti-CSRF token and the owning account', async () => {
    expect((await act('pause', { csrf: 'wrong' })).status).toBe(403)
    const stranger = await svc.extraSession(`stranger-${randomBytes(4).toString('hex')}`)
    expect((await act('pause', { cookie: stranger.cookie, csrf: stranger.csrfToken })).status).toBe(404)
    expect((await act('archive')).status).toBe(404)

    const paused = await act('pause')
    expect(paused.status).toBe(200)
    expect(await paused.json()).toMatchObject({ monitorId, enabled: false, nextRunAt: null })
    expect(await page()).toContain('data-verb="resume"')
    await makeDue(monitorId)
    expect(await cron()).toMatchObject({ due: 0 })

    const resumed = await (await act('resume')).json()
    expect(resumed.enabled).toBe(true)
    expect(new Date(resumed.nextRunAt).getTime()).toBeGreaterThan(Date.now())

    expect((await act('remove')).status).toBe(200)
    expect((await sql`SELECT 1 FROM monitor_runs WHERE monitor_id = ${monitorId}`).length).toBe(0)
    expect(await page()).not.toContain(`data-monitor="${monitorId}"`)
    expect((await act('remove')).status).toBe(404)
    expect((await c.account()).monitors).toEqual([])
  }, 60_000)
})

describe('the next slot in the embedded database', () => {
  test('is the same as in PostgreSQL: strictly after now, in UTC, on the weekday asked for', async () => {
    const embedded = await startService('embedded', { ROLE: 'api' })
    try {
      // 2026-11-25 is a Wednesday (3).
      const cases: Array<[string, number, number | null, string, string]> = [
        ['daily', 11, null, '2026-11-25T10:30:00Z', '2026-11-25T11:00:00.000Z'],
        ['daily', 10, null, '2026-11-25T10:30:00Z', '2026-11-26T10:00:00.000Z'],
        ['daily', 10, null, '2026-11-25T10:00:00Z', '2026-11-26T10:00:00.000Z'],
        ['weekly', 11, 3, '2026-11-25T10:30:00Z', '2026-11-25T11:00:00.000Z'],
        ['weekly', 9, 3, '2026-11-25T10:30:00Z', '2026-12-02T09:00:00.000Z'],
        ['weekly', 0, 4, '2026-11-25T10:30:00Z', '2026-11-26T00:00:00.000Z'],
        ['weekly', 23, 2, '2026-11-25T10:30:00Z', '2026-12-01T23:00:00.000Z'],
        ['weekly', 5, 0, '2026-12-31T23:59:59Z', '2027-01-03T05:00:00.000Z'],
      ]
      for (const db of [sql, embedded.running.services.db.sql]) {
        for (const [schedule, hour, weekday, after, expected] of cases) {
          const [row] = await db<
            { at: Date }[]
          >`SELECT monitor_next_run(${schedule}::text, ${hour}::int, ${weekday}::int, ${after}::timestamptz) AS at`
          expect(`${schedule} ${hour} ${weekday} after ${after}: ${row!.at.toISOString()}`).toBe(
            `${schedule} ${hour} ${weekday} after ${after}: ${expected}`,
          )
        }
      }
    } finally {
      await embedded.stop()
    }
  }, 60_000)
})
