// create_patch end to end, through the official MCP SDK client against the real service (PostgreSQL,
// Redis, Chromium): a patch built from a completed scan (and audit) of a weak fixture site, whose diff
// applies with `git apply` to the fixture repository of its platform; plan, ownership and argument errors;
// a repository connected from the dashboard (token sealed, never shown again) to which create_patch pushes
// a branch over real git smart HTTP (`git http-backend` behind basic auth) and opens a pull request on a
// stand-in of GitHub's REST API; GET /api/patches/{id} for the session only; and the token never appearing
// in the service's logs, the database, error messages or the pull request.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { RATE_LIMITS } from '../../shared/rate-limits.ts'
import { randomBytes } from 'node:crypto'
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { PATCH_PLATFORMS } from '../../api/patches/builder.ts'
import { createApiKey } from '../../shared/db/accounts.ts'
import { call, connectClient, errorOf, ok } from '../harness/client.ts'
import { jarFetch, signIn, startSignInService, type CookieJar, type SignInService } from '../harness/signin.ts'
import { captureLogLines } from '../harness/logs.ts'
import { until } from '../harness/wait.ts'
import { weakSite, type Site } from '../fixtures/sites.ts'
import { type GitHost, type PullRequestApi, sh, startGitHost, startPullRequestApi } from './git-host.ts'
import { errorMessage } from '../../shared/errors.ts'
import { machineDeadline } from '../harness/machine.ts'

const FIXTURES = join(import.meta.dir, '../fixtures/patch-repos')
// A unique token planted for this run: every place it must never reach is searched for it.
const TOKEN = `ghp_${randomBytes(18).toString('hex')}`
const WRONG_TOKEN = `ghp_${randomBytes(18).toString('hex')}`
const SECRETS_KEY = randomBytes(32).toString('base64')

// The service's log lines (it runs in this process and writes JSON lines to stdout/stderr), kept to search.
let logs: ReturnType<typeof captureLogLines>

let svc: SignInService
let site: Site
let git: GitHost
let api: PullRequestApi
let jar: CookieJar
let csrf: string
let accountId: string
let repoUrl: string
const clients: Client[] = []
const dirs: string[] = []

beforeAll(async () => {
  logs = captureLogLines()
  site = await weakSite()
  git = await startGitHost(TOKEN)
  api = await startPullRequestApi(TOKEN)
  repoUrl = git.createRepo('acme', 'shop', join(FIXTURES, 'vercel'))
  svc = await startSignInService('production', {
    ROLE: 'all',
    SECRETS_KEY,
    GITHUB_HOST: git.host,
    GITHUB_API_URL: api.url,
    LOG_LEVEL: 'debug',
    // The machine running the suite may be busy: a local page still loads, just slower than the harness's 5 s.
    NAV_TIMEOUT_MS: '20000',
  })
  jar = await signIn(svc)
  const page = await (await jarFetch(jar, `${svc.baseUrl}/dashboard/settings`)).text()
  csrf = /name="csrf-token" content="([^"]+)"/.exec(page)![1]!
  const [row] = await svc.running.services.db.sql<{ account_id: string }[]>`SELECT account_id FROM users WHERE issuer = ${svc.idp.issuer}`
  accountId = row!.account_id
}, 120_000)

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {})
  await svc?.stop()
  await site?.stop()
  await git?.stop()
  await api?.stop()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
  logs?.restore()
})

async function client(key: string): Promise<Client> {
  const c = await connectClient(svc.mcpUrl, key)
  clients.push(c)
  return c
}

/** A scale (or other plan) account with a key, as an MCP client. */
async function accountClient(plan: 'free' | 'launch' | 'scale' = 'scale') {
  return client(await svc.key(plan))
}

/** The signed-in dashboard user's account as a scale-plan MCP client. */
async function dashboardAccountClient() {
  const sql = svc.running.services.db.sql
  await sql`UPDATE accounts SET plan = 'scale' WHERE id = ${accountId}`
  return client((await createApiKey(sql, accountId)).plaintext)
}

async function scanWeak(c: Client): Promise<string> {
  const report = await ok(c, 'scan_app', { url: site.url })
  expect(report.checks.find((x: { id: string }) => x.id === 'csp').status).toBe('fail')
  return report.id
}

/** A git repository holding the fixture of a platform (null: only a README), committed on main. */
function fixtureRepo(platform: string | null): string {
  const dir = mkdtempSync(join(tmpdir(), 'patch-apply-'))
  dirs.push(dir)
  if (platform) cpSync(join(FIXTURES, platform), dir, { recursive: true })
  else writeFileSync(join(dir, 'README.md'), '# app\n')
  sh(['git', 'init', '-q', '-b', 'main'], dir)
  sh(['git', 'add', '-A'], dir)
  sh(['git', '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'init'], dir)
  return dir
}

/** Applies the diff with real `git apply` (after --check) and returns the repository. */
function applyDiff(platform: string | null, diff: string): string {
  const dir = fixtureRepo(platform)
  writeFileSync(join(dir, '..', `${dir.split('/').pop()}.patch`), diff)
  const patchFile = join(dir, '..', `${dir.split('/').pop()}.patch`)
  dirs.push(patchFile)
  sh(['git', 'apply', '--check', patchFile], dir)
  sh(['git', 'apply', patchFile], dir)
  return dir
}

const dashboardForm = (path: string, fields: Record<string, string>, origin = svc.baseUrl) =>
  jarFetch(jar, `${svc.baseUrl}${path}`, {
    method: 'POST',
    headers: { origin, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  })

const settingsHtml = async () => (await jarFetch(jar, `${svc.baseUrl}/dashboard/settings`)).text()

let otherPatchId: string

describe('create_patch without a repository', () => {
  let c: Client
  let scanId: string

  beforeAll(async () => {
    c = await accountClient('scale')
    scanId = await scanWeak(c)
  }, machineDeadline(90_000))

  // Without a repository the service cannot see existing files: the diff creates the platform's file. Where
  // the fixture already has that file (vercel.json, netlify.toml, next.config.js) the answer says so and the
  // diff applies to a repository without it; the connected-repository tests below apply every platform's
  // diff to its fixture.
  const CREATES_EXISTING = new Set(['vercel', 'netlify', 'nextjs'])

  test.each([...PATCH_PLATFORMS])(
    'a %s patch from a completed scan: its diff applies with git apply; what configuration cannot fix is listed with why; a watch link',
    async (platform) => {
      const started = Date.now()
      const r = await ok(c, 'create_patch', { scanId, platform })
      const ms = Date.now() - started
      expect(r.status).toBe('ready')
      expect(r.platform).toBe(platform)
      expect(r.patchId).toMatch(/^pat_/)
      expect(r.source).toBe(scanId)
      expect(r.watch).toBe(`${svc.baseUrl}/api/patches/${r.patchId}`)
      expect(r.diff).toContain('Content-Security-Policy')
      expect(r.diff).toContain('X-Frame-Options')
      const fixedIds = r.fixed.map((f: { checkId: string }) => f.checkId)
      for (const id of ['csp', 'frame-protection', 'x-content-type-options']) expect(fixedIds).toContain(id)
      for (const f of r.fixed) expect(f.verify.length).toBeGreaterThan(10)
      const notFixed = Object.fromEntries(r.notFixed.map((n: { checkId: string; why: string }) => [n.checkId, n.why]))
      expect(notFixed['exposed-env-file']).toMatch(/remove it from what is deployed/i)
      expect(notFixed['js-secrets']).toMatch(/revoke/i)
      // Served over http: HSTS cannot be fixed by a header until https exists.
      expect(fixedIds).not.toContain('hsts')
      const created = (r.files as Array<{ path: string; change: string }>).filter((f) => f.change === 'created').map((f) => f.path)
      expect(created.length).toBeGreaterThan(0)
      expect(r.notes[0]).toContain(`No repository was read, so this diff creates ${created.join(', ')}`)
      const dir = applyDiff(CREATES_EXISTING.has(platform) ? null : platform, r.diff)
      for (const f of r.files as Array<{ path: string }>) expect(readFileSync(join(dir, f.path), 'utf8')).toContain('nosniff')
      expect(r.pullRequest).toBeUndefined()
      process.stderr.write(`create_patch ${platform}: ${ms} ms, ${r.diff.length} bytes of diff\n`)
      otherPatchId = r.patchId
    },
  )

  test("without platform, the platform the scan detected; the diff applies to that platform's fixture", async () => {
    const r = await ok(c, 'create_patch', { scanId })
    expect(r.status).toBe('ready')
    // The weak site answers X-Powered-By: Express.
    expect(r.platform).toBe('express')
    applyDiff('express', r.diff)
  })

  test('from a completed audit (auditId)', async () => {
    const started = await ok(c, 'audit_app', { url: site.url, options: { maxPages: 1, maxDepth: 0 } })
    let last = ''
    await until(
      async () => {
        const a = await ok(c, 'get_audit', { auditId: started.auditId })
        last = a.status
        if (last === 'failed') throw new Error(`the audit failed: ${JSON.stringify(a.error ?? a).slice(0, 500)}`)
        return last === 'completed'
      },
      150_000,
      'the audit to complete',
      { everyMs: 500, rethrow: true },
    ).catch((e) => {
      throw new Error(`${errorMessage(e)} (last status: ${last})`)
    })
    const r = await ok(c, 'create_patch', { auditId: started.auditId, platform: 'nginx' })
    expect(r.status).toBe('ready')
    expect(r.source).toBe(started.auditId)
    expect(r.fixed.map((f: { checkId: string }) => f.checkId)).toContain('csp')
    expect(r.notFixed.map((f: { checkId: string }) => f.checkId)).toContain('exposed-env-file')
    applyDiff('nginx', r.diff)
  }, 180_000)

  test('free and launch plans answer plan_required', async () => {
    for (const plan of ['free', 'launch'] as const) {
      const e = await errorOf(await accountClient(plan), 'create_patch', { scanId, platform: 'vercel' })
      expect(e.code).toBe('plan_required')
      expect(e.requiredPlan).toBe('scale')
      expect(e.currentPlan).toBe(plan)
    }
  })

  test("another account's scan is not_found, like one that does not exist", async () => {
    const other = await accountClient('scale')
    const e = await errorOf(other, 'create_patch', { scanId, platform: 'vercel' })
    expect(e.code).toBe('not_found')
    expect((await errorOf(other, 'create_patch', { scanId: 'scn_doesnotexist0000000' })).code).toBe('not_found')
    expect((await errorOf(other, 'create_patch', { auditId: 'aud_doesnotexist0000000' })).code).toBe('not_found')
  })

  test('neither or both of scanId and auditId is invalid_params saying which to pass', async () => {
    const none = await errorOf(c, 'create_patch', { platform: 'vercel' })
    expect(none.code).toBe('invalid_params')
    expect(none.message).toContain('exactly one of scanId and auditId')
    const both = await errorOf(c, 'create_patch', { scanId, auditId: 'aud_abc123456789' })
    expect(both.code).toBe('invalid_params')
    expect(both.message).toContain('exactly one of scanId and auditId')
    const badPlatform = await call(c, 'create_patch', { scanId, platform: 'heroku' })
    expect(badPlatform.isError).toBe(true)
    expect(badPlatform.body.error.code).toBe('invalid_params')
  })
})

describe('a connected repository', () => {
  let c: Client
  let patch: any
  let ownScanId: string

  test('the settings page offers to connect one; forms without the anti-CSRF token are refused', async () => {
    const html = await settingsHtml()
    expect(html).toContain('id="repository-connect"')
    expect(html).toContain('action="/dashboard/repository"')
    const noToken = await dashboardForm('/dashboard/repository', { url: repoUrl, token: TOKEN })
    expect(noToken.status).toBe(403)
    const foreign = await dashboardForm('/dashboard/repository', { csrf, url: repoUrl, token: TOKEN }, 'https://evil.example')
    expect(foreign.status).toBe(403)
    const bearer = await fetch(`${svc.baseUrl}/dashboard/repository`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${await svc.key('scale')}`,
        origin: svc.baseUrl,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ csrf, url: repoUrl, token: TOKEN }).toString(),
    })
    expect(bearer.status).toBe(401)
    expect(await svc.running.services.db.sql`SELECT 1 FROM repo_connections`).toHaveLength(0)
  })

  test('an account whose plan cannot open pull requests is refused before git runs', async () => {
    const refusedBefore = git.refused
    const res = await dashboardForm('/dashboard/repository', { csrf, url: repoUrl, token: TOKEN })
    expect(res.status).toBe(403)
    expect(await res.text()).toContain('need the scale plan; this account is on free')
    expect(git.refused).toBe(refusedBefore)
    expect(await svc.running.services.db.sql`SELECT 1 FROM repo_connections`).toHaveLength(0)
    await svc.running.services.db.sql`UPDATE accounts SET plan = 'scale' WHERE id = ${accountId}`
  })

  test('a token the host refuses is not stored, and the page says why without echoing it', async () => {
    const refusedBefore = git.refused
    const res = await dashboardForm('/dashboard/repository', { csrf, url: repoUrl, token: WRONG_TOKEN })
    expect(res.status).toBe(400)
    const html = await res.text()
    expect(html).toContain('id="repository-error"')
    expect(html).toMatch(/refused the token/)
    expect(html).not.toContain(WRONG_TOKEN)
    expect(html).toContain(repoUrl) // the URL is kept in the form, the token is not
    expect(git.refused).toBeGreaterThan(refusedBefore)
    expect(await svc.running.services.db.sql`SELECT 1 FROM repo_connections`).toHaveLength(0)
    const bad = await dashboardForm('/dashboard/repository', { csrf, url: `${repoUrl}?x=1`, token: TOKEN })
    expect(bad.status).toBe(400)
    expect(await bad.text()).toContain('no query or fragment')
  })

  test('connecting stores the token sealed; the page shows only that a token is set', async () => {
    const res = await dashboardForm('/dashboard/repository', { csrf, url: repoUrl, token: TOKEN })
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe('/dashboard/settings#repository')
    const html = await settingsHtml()
    expect(html).toContain(`<code id="repository-url">${repoUrl}</code>`)
    expect(html).toMatch(/id="repository-token">set/)
    expect(html).not.toContain(TOKEN)
    expect(html).toContain('action="/dashboard/repository/disconnect"')
    const [row] = await svc.running.services.db.sql<{ url: string; base_branch: string; token_sealed: string }[]>`
      SELECT url, base_branch, token_sealed FROM repo_connections WHERE account_id = ${accountId}`
    expect(row!.url).toBe(repoUrl)
    expect(row!.base_branch).toBe('main')
    expect(row!.token_sealed).toMatch(/^v1\.[0-9a-f]{8}\./)
    expect(row!.token_sealed).not.toContain(TOKEN)
    // Sealed for this account only: it opens with the service's key and this account's purpose.
    expect(svc.running.services.patches.box!.open(row!.token_sealed, `repo-token:${accountId}`)).toBe(TOKEN)
  })

  test('create_patch clones it, pushes a branch with the patched files and opens a pull request listing the fixes', async () => {
    c = await dashboardAccountClient()
    const scanId = await scanWeak(c)
    ownScanId = scanId
    const started = Date.now()
    patch = await ok(c, 'create_patch', { scanId })
    const ms = Date.now() - started
    process.stderr.write(`create_patch with a repository (clone, push, pull request): ${ms} ms\n`)
    expect(patch.status).toBe('pr_opened')
    expect(patch.platform).toBe('vercel') // from the repository's vercel.json, not the scan
    expect(patch.branch).toMatch(/^appaudit\/fix-[a-z0-9]+$/)
    expect(patch.pullRequest).toEqual({ number: 1, url: 'https://github.example/acme/shop/pull/1' })

    // The branch exists in the bare repository, one commit on top of main, holding exactly the patched files.
    const bare = git.repoDir('acme', 'shop')
    const main = sh(['git', '--git-dir', bare, 'rev-parse', 'refs/heads/main'], bare).trim()
    expect(sh(['git', '--git-dir', bare, 'rev-parse', `refs/heads/${patch.branch}^`], bare).trim()).toBe(main)
    const changed = sh(['git', '--git-dir', bare, 'diff', '--name-only', 'main', patch.branch], bare).trim().split('\n')
    expect(changed.sort()).toEqual(patch.files.map((f: { path: string }) => f.path).sort())
    const pushed = sh(['git', '--git-dir', bare, 'show', `${patch.branch}:vercel.json`], bare)
    const config = JSON.parse(pushed)
    const headers = Object.fromEntries(
      config.headers.flatMap((h: { headers: Array<{ key: string; value: string }> }) => h.headers.map((x) => [x.key, x.value])),
    )
    expect(headers['Content-Security-Policy']).toContain("default-src 'self'")
    expect(headers['X-Content-Type-Options']).toBe('nosniff')
    // The answer's diff is what was pushed: applied to main it gives the branch's file.
    const applied = applyDiff('vercel', patch.diff)
    expect(readFileSync(join(applied, 'vercel.json'), 'utf8')).toBe(pushed)

    // The pull request call: GitHub's documented request.
    expect(api.calls).toHaveLength(1)
    const pr = api.calls[0]!
    expect(pr.method).toBe('POST')
    expect(pr.path).toBe('/repos/acme/shop/pulls')
    expect(pr.headers.authorization).toBe(`Bearer ${TOKEN}`)
    expect(pr.headers.accept).toBe('application/vnd.github+json')
    expect(pr.headers['x-github-api-version']).toBe('2022-11-28')
    expect(pr.body.head).toBe(patch.branch)
    expect(pr.body.base).toBe('main')
    expect(pr.body.title).toMatch(/^Security headers and configuration fixes \(\d+ findings?\)$/)
    const body: string = pr.body.body
    expect(body).toContain('## Fixed')
    for (const f of patch.fixed) {
      expect(body).toContain(`\`${f.checkId}\``)
      expect(body).toContain(`Verify: ${f.verify}`)
    }
    expect(body).toContain('## Not fixed by configuration')
    expect(body).toContain('`exposed-env-file`')
    expect(body).toContain(patch.patchId)
    expect(body).not.toContain(TOKEN)
  }, 120_000)

  test.each(PATCH_PLATFORMS.filter((p) => p !== 'vercel'))(
    "a connected %s repository: the platform comes from its files, and the pushed diff applies to the platform's fixture",
    async (platform) => {
      const url = git.createRepo('acme', `${platform}-site`, join(FIXTURES, platform))
      expect((await dashboardForm('/dashboard/repository', { csrf, url, token: TOKEN })).status).toBe(303)
      const calls = api.calls.length
      const r = await ok(c, 'create_patch', { scanId: ownScanId })
      expect(r.status).toBe('pr_opened')
      expect(r.platform).toBe(platform)
      expect(r.notes.join(' ')).not.toContain('No repository was read')
      const applied = applyDiff(platform, r.diff)
      const bare = git.repoDir('acme', `${platform}-site`)
      for (const f of r.files as Array<{ path: string }>) {
        expect(sh(['git', '--git-dir', bare, 'show', `${r.branch}:${f.path}`], bare)).toBe(readFileSync(join(applied, f.path), 'utf8'))
      }
      expect(api.calls).toHaveLength(calls + 1)
      expect(api.calls[calls]!.path).toBe(`/repos/acme/${platform}-site/pulls`)
      expect(api.calls[calls]!.body.head).toBe(r.branch)
    },
    60_000,
  )

  test('repository: false builds only the diff, even with a repository connected', async () => {
    const calls = api.calls.length
    const r = await ok(c, 'create_patch', { scanId: ownScanId, repository: false })
    expect(r.status).toBe('ready')
    expect(r.branch).toBeUndefined()
    expect(api.calls).toHaveLength(calls)
  })

  test("GET /api/patches/{id}: the session sees state and diff; any bearer token is 401; another account's patch is 404", async () => {
    const res = await jarFetch(jar, `${svc.baseUrl}/api/patches/${patch.patchId}`)
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toContain('no-store')
    const body = await res.json()
    expect(body.patchId).toBe(patch.patchId)
    expect(body.status).toBe('pr_opened')
    expect(body.diff).toBe(patch.diff)
    expect(body.pullRequest.number).toBe(1)
    const key = await svc.key('scale')
    for (const auth of [`Bearer ${key}`, `Bearer ${TOKEN}`, 'Bearer anything']) {
      const r = await jarFetch(jar, `${svc.baseUrl}/api/patches/${patch.patchId}`, { headers: { authorization: auth } })
      expect(r.status).toBe(401)
    }
    expect((await fetch(`${svc.baseUrl}/api/patches/${patch.patchId}`)).status).toBe(401)
    expect((await jarFetch(jar, `${svc.baseUrl}/api/patches/${otherPatchId}`)).status).toBe(404)
    expect((await jarFetch(jar, `${svc.baseUrl}/api/patches/pat_doesnotexist000000`)).status).toBe(404)
    const mallory = await svc.extraSession('mallory')
    const theirs = await fetch(`${svc.baseUrl}/api/patches/${patch.patchId}`, { headers: { cookie: `aa_session=${mallory.cookie}` } })
    expect(theirs.status).toBe(404)
  })

  test('the token appears in no log line, no database row (only sealed), no answer', async () => {
    const basic = Buffer.from(`x-access-token:${TOKEN}`).toString('base64')
    expect(logs.lines.length).toBeGreaterThan(10)
    expect(logs.lines.some((l) => l.includes('pull request opened'))).toBe(true)
    // Every answer matched create_patch's declared outputSchema (the server logs any drift).
    expect(logs.lines.filter((l) => l.includes('does not match its outputSchema'))).toEqual([])
    for (const secret of [TOKEN, WRONG_TOKEN, basic]) {
      expect(logs.lines.filter((l) => l.includes(secret))).toEqual([])
    }
    const sql = svc.running.services.db.sql
    const tables = await sql<{ table_name: string }[]>`
      SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`
    expect(tables.map((t) => t.table_name)).toContain('repo_connections')
    let rows = 0
    for (const { table_name } of tables) {
      const found = await sql.unsafe(`SELECT to_jsonb(t)::text AS row FROM "${table_name.replace(/"/g, '')}" t`)
      rows += found.length
      for (const r of found as unknown as Array<{ row: string }>) {
        for (const secret of [TOKEN, WRONG_TOKEN, basic]) expect(r.row.includes(secret)).toBe(false)
      }
    }
    expect(rows).toBeGreaterThan(20)
    expect(JSON.stringify(patch)).not.toContain(TOKEN)
  })

  test('disconnecting deletes the stored token; create_patch then builds only the diff', async () => {
    expect((await dashboardForm('/dashboard/repository/disconnect', {})).status).toBe(403)
    expect(await svc.running.services.db.sql`SELECT 1 FROM repo_connections`).toHaveLength(1)
    const res = await dashboardForm('/dashboard/repository/disconnect', { csrf })
    expect(res.status).toBe(303)
    expect(await svc.running.services.db.sql`SELECT 1 FROM repo_connections`).toHaveLength(0)
    const html = await settingsHtml()
    expect(html).toContain('id="repository-connect"')
    expect(html).not.toContain('id="repository-token"')
    const calls = api.calls.length
    const r = await ok(c, 'create_patch', { scanId: patch.source })
    expect(r.status).toBe('ready')
    expect(r.pullRequest).toBeUndefined()
    expect(api.calls).toHaveLength(calls)
  })

  test('repository connects are rate-limited per account: once refused, git is not run again', async () => {
    const limit = RATE_LIMITS.repositoryConnect.limit
    let refusedAt = -1
    for (let i = 0; i <= limit && refusedAt < 0; i++) {
      const res = await dashboardForm('/dashboard/repository', { csrf, url: repoUrl, token: WRONG_TOKEN })
      if (res.status === 429) refusedAt = i
      else expect(res.status).toBe(400)
    }
    expect(refusedAt).toBeGreaterThanOrEqual(0)
    const before = git.refused
    const res = await dashboardForm('/dashboard/repository', { csrf, url: repoUrl, token: WRONG_TOKEN })
    expect(res.status).toBe(429)
    expect(await res.text()).toContain('Too many repository connects')
    expect(git.refused).toBe(before)
  })
})
