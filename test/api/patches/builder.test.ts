// The patch builder against a fixture repository of each platform: the unified diff applies with real
// `git apply`, the result is valid for its platform (JSON parses, nginx -t passes, the Next.js config and the
// Express middleware run), and hostile values never reach a file.
import { afterAll, describe, expect, test } from 'bun:test'
import { cpSync, existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import {
  buildPatch,
  PATCH_PLATFORMS,
  platformFromRepo,
  type PatchPlatform,
  type PatchSource,
  type RepoView,
} from '../../../api/patches/builder.ts'
import { unifiedDiff } from '../../../api/patches/diff.ts'

const FIXTURES = join(import.meta.dir, '../../fixtures/patch-repos')
const dirs: string[] = []
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

function sh(cmd: string[], cwd: string, stdin?: string) {
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
function repoOf(platform: PatchPlatform | null): string {
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

function view(dir: string): RepoView {
  const paths = walk(dir)
  return { paths, read: (p) => (existsSync(join(dir, p)) ? readFileSync(join(dir, p), 'utf8') : null) }
}

const finding = (checkId: string, evidence: Record<string, unknown> = {}, status = 'fail') => ({
  checkId,
  title: checkId,
  severity: 'high',
  status,
  evidence,
})

const SOURCE: PatchSource = {
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

function applyPatch(dir: string, diff: string) {
  const check = sh(['git', 'apply', '--check', '-v', '-'], dir, diff)
  if (check.code !== 0) console.error(diff, check.err)
  expect(check.code).toBe(0)
  expect(sh(['git', 'apply', '-'], dir, diff).code).toBe(0)
}

describe('a patch for each platform applies with git apply to its fixture repository', () => {
  for (const platform of PATCH_PLATFORMS) {
    test(platform, async () => {
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
      await validate(platform, dir, plan)
    })
  }
})

async function validate(platform: PatchPlatform, dir: string, plan: ReturnType<typeof buildPatch>) {
  const csp = (s: string) => expect(s).toContain("script-src 'self' https://googletagmanager.com https://*.googletagmanager.com")
  switch (platform) {
    case 'vercel': {
      const doc = JSON.parse(readFileSync(join(dir, 'vercel.json'), 'utf8'))
      expect(doc.cleanUrls).toBe(true)
      expect(doc.redirects).toHaveLength(1)
      const keys = doc.headers[0].headers.map((h: { key: string }) => h.key)
      expect(keys).toContain('Content-Security-Policy')
      csp(doc.headers[0].headers.find((h: { key: string }) => h.key === 'Content-Security-Policy').value)
      break
    }
    case 'netlify': {
      const toml = readFileSync(join(dir, 'netlify.toml'), 'utf8')
      expect(toml).toContain('[[headers]]')
      expect(toml).toContain('X-Content-Type-Options = "nosniff"')
      expect(toml).toContain('publish = "dist"')
      const parsed = Bun.TOML.parse(toml) as { headers: Array<{ for: string; values: Record<string, string> }> }
      expect(parsed.headers[0]!.values['X-Frame-Options']).toBe('DENY')
      break
    }
    case 'cloudflare': {
      const h = readFileSync(join(dir, 'public/_headers'), 'utf8')
      expect(h).toContain('/*\n  ')
      expect(h).toContain('  Strict-Transport-Security: max-age=63072000; includeSubDomains')
      break
    }
    case 'nextjs': {
      const mod = await import(join(dir, 'next.config.js'))
      const cfg = mod.default ?? mod
      expect(cfg.reactStrictMode).toBe(true)
      expect(cfg.poweredByHeader).toBe(false)
      const rules = await cfg.headers()
      expect(rules[0].source).toBe('/:path*')
      csp(rules[0].headers.find((h: { key: string }) => h.key === 'Content-Security-Policy').value)
      break
    }
    case 'nginx': {
      const conf = readFileSync(join(dir, 'conf.d/site.conf'), 'utf8')
      expect(conf).toContain('return 301 https://$host$request_uri;')
      expect(conf).toContain('add_header X-Content-Type-Options "nosniff" always;')
      expect(conf).toContain('proxy_cookie_flags ~ secure httponly;')
      expect(conf).toContain('server_tokens off;')
      // nginx itself accepts the result.
      const certs = join(dir, 'certs')
      sh(['mkdir', '-p', certs], dir)
      const ssl = sh(
        [
          'openssl',
          'req',
          '-x509',
          '-newkey',
          'rsa:2048',
          '-nodes',
          '-subj',
          '/CN=app.example.com',
          '-days',
          '1',
          '-keyout',
          join(certs, 'app.key'),
          '-out',
          join(certs, 'app.pem'),
        ],
        dir,
      )
      expect(ssl.code).toBe(0)
      writeFileSync(
        join(dir, 'test-nginx.conf'),
        `pid ${dir}/nginx.pid;\nerror_log ${dir}/error.log;\nevents {}\nhttp {\n  access_log off;\n  include ${dir}/conf.d/site.conf;\n}\n`,
      )
      const t = sh(['nginx', '-t', '-q', '-p', dir, '-c', join(dir, 'test-nginx.conf')], dir)
      if (t.code !== 0) console.error(t.err)
      expect(t.code).toBe(0)
      break
    }
    case 'apache': {
      const h = readFileSync(join(dir, 'public/.htaccess'), 'utf8')
      expect(h).toStartWith('Options -Indexes\n')
      expect(h).toContain('Header always set X-Content-Type-Options "nosniff"')
      expect(h).toContain('RewriteRule ^ https://%{HTTP_HOST}%{REQUEST_URI} [L,R=301]')
      expect(h).toContain('"$1; Secure"')
      break
    }
    case 'express': {
      const server = readFileSync(join(dir, 'src/server.js'), 'utf8')
      expect(server).toContain("const securityHeaders = require('./security-headers.js')")
      expect(server).toContain('app.use(securityHeaders)')
      expect(server).toContain("app.disable('x-powered-by')")
      const mw = (await import(join(dir, 'src/security-headers.js'))).default
      const set: Record<string, string> = {}
      const cookies: unknown[] = []
      const res = {
        setHeader: (k: string, v: string) => {
          set[k] = v
        },
        cookie: (...a: unknown[]) => cookies.push(a),
      }
      let nexted = false
      mw({ secure: true, get: () => 'https' }, res, () => {
        nexted = true
      })
      expect(nexted).toBe(true)
      expect(set['X-Content-Type-Options']).toBe('nosniff')
      ;(res.cookie as (n: string, v: string) => void)('session', 'abc')
      expect(cookies[0]).toEqual(['session', 'abc', { secure: true, httpOnly: true }])
      break
    }
  }
  expect(plan.edits.length).toBeGreaterThan(0)
}

test('without a repository the patch creates the platform files and applies to an empty repository', () => {
  for (const platform of PATCH_PLATFORMS) {
    const dir = repoOf(null)
    const plan = buildPatch(platform, SOURCE)
    const diff = unifiedDiff(plan.edits)
    expect(diff).toContain('new file mode 100644')
    expect(diff).toContain('--- /dev/null')
    applyPatch(dir, diff)
  }
})

test('a second patch on top of the first merges into vercel.json headers instead of adding another rule', () => {
  const dir = repoOf('vercel')
  applyPatch(dir, unifiedDiff(buildPatch('vercel', SOURCE, view(dir)).edits))
  const again = buildPatch('vercel', { ...SOURCE, findings: [finding('x-content-type-options'), finding('referrer-policy')] }, view(dir))
  const doc = JSON.parse(again.edits[0]!.after)
  expect(doc.headers).toHaveLength(1)
  expect(doc.headers[0].headers.filter((h: { key: string }) => h.key === 'X-Content-Type-Options')).toHaveLength(1)
})

describe('hostile input', () => {
  test('third-party names with newlines, quotes or nginx variables never reach a file', () => {
    const hostile: PatchSource = {
      ...SOURCE,
      checks: [
        {
          id: 'third-party-requests',
          evidence: {
            domains: [
              { domain: 'evil.com;\n}\nserver { listen 9; location / { return 200 "$http_cookie"; }', types: ['script'] },
              { domain: 'evil.com"; add_header X-Pwn 1', types: ['script'] },
              { domain: 'a.com\n+++ b/etc/passwd', types: ['script'] },
              { domain: '${process.env.SECRET}.com', types: ['script'] },
              { domain: 'good.example', types: ['script'] },
            ],
          },
        },
      ],
    }
    for (const platform of PATCH_PLATFORMS) {
      const diff = unifiedDiff(buildPatch(platform, hostile).edits)
      expect(diff).not.toContain('evil.com')
      expect(diff).not.toContain('X-Pwn')
      expect(diff).not.toContain('passwd')
      expect(diff).not.toContain('process.env.SECRET')
      expect(diff).toContain('https://good.example')
      const dir = repoOf(null)
      applyPatch(dir, diff)
    }
  })

  test('repository paths with newlines or .. are never read or written', () => {
    const repo: RepoView = {
      paths: ['conf.d/x.conf\n+++ b/evil', '../outside.conf', 'ok/../../x.conf'],
      read: (p) => (p.endsWith('.conf') || p.includes('\n') ? 'server {\n    listen 80;\n}\n' : null),
    }
    const plan = buildPatch('nginx', SOURCE, repo)
    for (const e of plan.edits) expect(e.path).toBe('nginx/snippets/security-headers.conf')
  })

  test('a vercel.json that is not a JSON object is left alone and explained', () => {
    const repo: RepoView = { paths: ['vercel.json'], read: (p) => (p === 'vercel.json' ? '[1, 2' : null) }
    const plan = buildPatch('vercel', SOURCE, repo)
    expect(plan.edits).toHaveLength(0)
    expect(plan.notFixed.find((n) => n.checkId === 'csp')?.why).toContain('not a JSON object')
  })

  test('HSTS is not proposed for an http page', () => {
    const plan = buildPatch('vercel', { ...SOURCE, url: 'http://app.example.com/' })
    expect(plan.notFixed.find((n) => n.checkId === 'hsts')?.why).toContain('https')
    expect(plan.edits[0]!.after).not.toContain('Strict-Transport-Security')
  })
})
