// What the patch builder's tests share: a committed git repository holding a platform's fixture (or
// nothing), a view of it as the builder reads it, a report's findings, and `git apply` of a patch.
import { expect } from 'bun:test'
import { cpSync, existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { buildPatch, type PatchPlatform, type PatchSource, platformFromRepo, type RepoView } from '../../../api/patches/builder.ts'
import { unifiedDiff } from '../../../api/patches/diff.ts'

const FIXTURES = join(import.meta.dir, '../../fixtures/patch-repos')
const dirs: string[] = []
/** Removes every repository repoOf made: each test file calls it in afterAll. */
export function removeRepos(): void {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
}

export function sh(cmd: string[], cwd: string, stdin?: string) {
  const p = Bun.spawnSync(cmd, { cwd, stdin: stdin === undefined ? 'ignore' : Buffer.from(stdin), stdout: 'pipe', stderr: 'pipe' })
  return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() }
}

function walk(root: string, dir = root): string[] {
  return readdirSync(dir).flatMap((n) => {
    const full = join(dir, n)
    if (n === '.git') return []
    return lstatSync(full).isDirectory() ? walk(root, full) : [relative(root, full)]
  })
}

/** A git repository holding a copy of the fixture (or nothing), committed. */
export function repoOf(platform: PatchPlatform | null): string {
  const dir = mkdtempSync(join(tmpdir(), 'patch-fixture-'))
  dirs.push(dir)
  if (platform) cpSync(join(FIXTURES, platform), dir, { recursive: true })
  else writeFileSync(join(dir, 'README.md'), '# app\n')
  for (const c of [
    ['git', 'init', '-q', '-b', 'main'],
    ['git', 'add', '-A'],
    ['git', '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'init'],
  ])
    expect(sh(c, dir).code).toBe(0)
  return dir
}

export function view(dir: string): RepoView {
  const paths = walk(dir)
  return { paths, read: (p) => (existsSync(join(dir, p)) ? readFileSync(join(dir, p), 'utf8') : null) }
}

export const finding = (checkId: string, evidence: Record<string, unknown> = {}, status = 'fail') => ({
  checkId,
  title: checkId,
  severity: 'high',
  status,
  evidence,
})

export const SOURCE: PatchSource = {
  url: 'https://app.example.com/',
  findings: [
    finding('csp'),
    finding('hsts'),
    finding('x-content-type-options'),
    finding('frame-protection'),
    finding('referrer-policy', {}, 'warn'),
    finding('permissions-policy', {}, 'warn'),
    finding('version-disclosure', { disclosures: [{ name: 'X-Powered-By', value: 'Next.js' }], server: 'nginx/1.22.1' }),
    finding('https-redirect', { startUrl: 'http://app.example.com/' }),
    finding('cookie-secure'),
    finding('cookie-httponly'),
    finding('exposed-env-file', { url: 'https://app.example.com/.env' }),
    finding('js-secrets'),
  ],
  checks: [
    {
      id: 'third-party-requests',
      evidence: {
        domains: [
          { domain: 'googletagmanager.com', types: ['script'] },
          { domain: 'fonts.gstatic.com', types: ['font'] },
          { domain: 'api.stripe.com', types: ['fetch'] },
        ],
      },
    },
  ],
}

export function applyPatch(dir: string, diff: string) {
  const check = sh(['git', 'apply', '--check', '-v', '-'], dir, diff)
  if (check.code !== 0) console.error(diff, check.err)
  expect(check.code).toBe(0)
  expect(sh(['git', 'apply', '-'], dir, diff).code).toBe(0)
}

/** The platform's patch built against its fixture and applied with git apply, after the checks every platform
 * passes: the repository is recognised, what configuration cannot fix is said with a reason, and every header
 * finding is fixed (or explained) with a way to verify it. */
export function patchFixture(platform: PatchPlatform): { dir: string; plan: ReturnType<typeof buildPatch> } {
  const dir = repoOf(platform)
  expect(platformFromRepo(view(dir))).toBe(platform)
  const plan = buildPatch(platform, SOURCE, view(dir))
  const diff = unifiedDiff(plan.edits)
  expect(diff).toStartWith('diff --git a/')
  applyPatch(dir, diff)
  // What configuration cannot fix is said, with a reason.
  const notFixedIds = plan.notFixed.map((n) => n.checkId)
  expect(notFixedIds).toContain('exposed-env-file')
  expect(notFixedIds).toContain('js-secrets')
  for (const n of plan.notFixed) expect(n.why.length).toBeGreaterThan(20)
  // Every header finding is fixed (or explained), and every fix says how to verify it.
  for (const id of ['csp', 'x-content-type-options', 'frame-protection', 'hsts'])
    expect([...plan.fixed.map((f) => f.checkId), ...notFixedIds]).toContain(id)
  for (const f of plan.fixed) expect(f.verify).toContain('curl')
  expect(plan.fixed.map((f) => f.checkId)).toContain('csp')
  return { dir, plan }
}

/** The CSP computed from the fixture report's third parties allows the tag manager's scripts. */
export const expectAdvisedCsp = (s: string) =>
  expect(s).toContain("script-src 'self' https://googletagmanager.com https://*.googletagmanager.com")
