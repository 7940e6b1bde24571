// The per-platform snippets of fix advice, run by the servers they are written for: the Apache lines go into
// a real Apache's .htaccess (mod_headers, mod_rewrite, FilesMatch, RedirectMatch, Options) and the Caddyfile
// lines into a real Caddy, each on a loopback port, and the responses must carry what the fix promises. The
// Express middleware runs in a real Express app; the IIS web.config fragments must be well-formed XML (libxml2)
// and the Django settings valid Python. Apache (Debian apache2) and Caddy (Debian caddy) run when installed.
import { afterAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, rmSync, writeFileSync, mkdirSync, chmodSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import express from 'express'
import { validateXML } from 'xmllint-wasm'
import { getCheck } from '../../../shared/checks/registry.ts'
import { buildCsp, cspAdviceText, pageSources } from '../../../shared/checks/util/csp-builder.ts'
import { cookieFixes, headerFixes } from '../../../shared/checks/util/fix.ts'
import { until } from '../../harness/wait.ts'
import { APACHE, apacheConfig } from '../../harness/apache.ts'
import { boundPort, reservedPort, untilListening } from '../../harness/ports.ts'

const CADDY = '/usr/bin/caddy'

/** A policy computed the way a scan computes it: hashes with base64 '+', '/' and '=' that configs must keep intact. */
const POLICY = buildCsp(
  pageSources({
    pageUrl: 'https://shop.example/',
    requests: [
      {
        url: 'https://cdn.example.net/a.js',
        method: 'GET',
        resourceType: 'script',
        status: 200,
        failure: null,
        headers: {},
        initiatorUrl: null,
      },
    ],
    inline: {
      scripts: [{ sha256: 'qznLcsROx4GACP2dm0UCKCzCG+HiZ1guq6ZZDob/Tng=', length: 22, text: "alert('Hello, world.');", nonce: false }],
      scriptCount: 1,
      handlers: [],
      handlerCount: 0,
      handlerNames: [],
      styles: [],
      styleCount: 0,
      styleAttributes: [],
      styleAttributeCount: 0,
    },
    serverHtml: null,
  }),
).policy
const HEADERS = [
  { key: 'Content-Security-Policy', value: POLICY },
  { key: 'Strict-Transport-Security', value: 'max-age=63072000; includeSubDomains' },
  { key: 'Permissions-Policy', value: 'camera=(), microphone=(), geolocation=()' },
  { key: 'Referrer-Policy', value: 'strict-origin-when-cross-origin' },
]

const dirs: string[] = []
const stops: Array<() => void> = []
afterAll(() => {
  for (const stop of stops) stop()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

function scratch(): string {
  const d = mkdtempSync(join(tmpdir(), 'snippets-'))
  chmodSync(d, 0o755)
  dirs.push(d)
  return d
}

/** Lines of a snippet from the first line that starts with `from` to the last that starts with `to`. */
function block(text: string, from: string, to: string): string {
  const lines = text.split('\n')
  const start = lines.findIndex((l) => l.trimStart().startsWith(from))
  const end = lines.findLastIndex((l) => l.trimStart().startsWith(to))
  if (start < 0 || end < start) throw new Error(`no ${from}...${to} block in:\n${text}`)
  return lines.slice(start, end + 1).join('\n')
}

/** A brace block from the line that starts with `from` to the closing brace at the same indentation. */
function braceBlock(text: string, from: string): string {
  const lines = text.split('\n')
  const start = lines.findIndex((l) => l.trimStart().startsWith(from))
  if (start < 0) throw new Error(`no ${from} block in:\n${text}`)
  const indent = lines[start]!.length - lines[start]!.trimStart().length
  const end = lines.findIndex((l, i) => i > start && l === `${' '.repeat(indent)}}`)
  return lines.slice(start, end + 1).join('\n')
}

const fetchNoRedirect = (url: string) => fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(5_000) })

describe.skipIf(!existsSync(APACHE))('Apache: .htaccess snippets in a real Apache', () => {
  let base = ''

  test('starts with the snippets in .htaccess', async () => {
    const root = scratch()
    const www = join(root, 'www')
    mkdirSync(www)
    chmodSync(www, 0o755)
    writeFileSync(join(www, 'index.html'), '<p>hi</p>')
    writeFileSync(join(www, '.env'), 'SECRET=1')
    mkdirSync(join(www, '.git'))
    writeFileSync(join(www, '.git', 'config'), '[core]')
    mkdirSync(join(www, 'files'))
    writeFileSync(join(www, 'files', 'a.txt'), 'a')
    const { port, release } = await reservedPort()
    stops.push(() => void release())
    const apacheCookie = cookieFixes('Secure').apache
    const htaccess = [
      block(headerFixes(HEADERS).apache, '<IfModule', '</IfModule>'),
      // A cookie for the stop-gap edit to fix, set before it (mod_headers runs its lines in order).
      '<IfModule mod_headers.c>\n  Header always add Set-Cookie "sid=abc; path=/"\n</IfModule>',
      block(apacheCookie.slice(apacheCookie.indexOf('As a stop-gap')), '<IfModule', '</IfModule>'),
      block(getCheck('exposed-env-file')!.fix.apache!, '<FilesMatch', '</FilesMatch>'),
      getCheck('exposed-git-config')!
        .fix.apache!.split('\n')
        .find((l) => l.startsWith('RedirectMatch'))!,
      getCheck('directory-listing')!
        .fix.apache!.split('\n')
        .find((l) => l.startsWith('Options'))!,
      'Header always unset X-Powered-By',
      block(getCheck('https-redirect')!.fix.apache!, 'RewriteEngine', 'RewriteRule'),
    ].join('\n')
    writeFileSync(join(www, '.htaccess'), htaccess)
    const mods = ['mpm_event', 'authz_core', 'headers', 'rewrite', 'alias', 'autoindex', 'mime', 'dir']
    writeFileSync(join(root, 'httpd.conf'), apacheConfig({ root, port, www, modules: mods, directory: ['Options +Indexes'] }))
    const proc = Bun.spawn([APACHE, '-f', join(root, 'httpd.conf'), '-DFOREGROUND'], { stdout: 'pipe', stderr: 'pipe' })
    stops.push(() => proc.kill())
    await untilListening(proc.pid, port, 10_000, 'Apache', () => proc.exitCode !== null)
    await release()
    base = `http://127.0.0.1:${port}`
    await until(async () => (await fetch(`${base}/`, { redirect: 'manual' }).catch(() => null)) !== null, 10_000, 'Apache to answer')
  }, 20_000)

  test('headers are sent as written, the CSP intact; the cookie gets Secure; the redirect, the denials and no listing work', async () => {
    // A request that says it came over https (as a TLS-terminating proxy does) is not redirected.
    const https = { 'x-forwarded-proto': 'https' }
    const page = await fetch(`${base}/`, { headers: https, redirect: 'manual' })
    expect(page.status).toBe(200)
    for (const h of HEADERS) expect(page.headers.get(h.key)).toBe(h.value)
    expect(page.headers.get('set-cookie')).toBe('sid=abc; path=/; Secure')
    // Plain http: redirected to https, same host and path.
    const plain = await fetchNoRedirect(`${base}/files/a.txt`)
    expect(plain.status).toBe(301)
    expect(plain.headers.get('location')).toBe(`https://127.0.0.1:${base.split(':').pop()}/files/a.txt`)
    expect((await fetch(`${base}/.env`, { headers: https })).status).toBe(403)
    expect((await fetch(`${base}/.git/config`, { headers: https })).status).toBe(404)
    expect((await fetch(`${base}/files/`, { headers: https })).status).toBe(403)
    // The computed policy's own advice for Apache is the same line.
    const advice = cspAdviceText({ policy: POLICY, mode: 'hashes', notes: [] }, 'apache', 'https://shop.example/')
    expect(advice).toContain(`Header always set Content-Security-Policy "${POLICY}"`)
  }, 20_000)
})

describe.skipIf(!existsSync(CADDY))('Caddy: Caddyfile snippets in a real Caddy', () => {
  test('the header block, header removal and the path denials work; the other snippets validate', async () => {
    const root = scratch()
    const headerBlock = braceBlock(headerFixes(HEADERS).caddy, 'header {')
    const versionBlock = braceBlock(getCheck('version-disclosure')!.fix.caddy!, 'header {')
    const env = getCheck('exposed-env-file')!
      .fix.caddy!.split('\n')
      .filter((l) => l.startsWith('@env') || l.startsWith('respond @env'))
    const git = getCheck('exposed-git-config')!
      .fix.caddy!.split('\n')
      .filter((l) => l.startsWith('@git') || l.startsWith('respond @git'))
    const caddyfile = [
      '{',
      '  admin off',
      '  auto_https off',
      '}',
      // Port 0 on loopback: the port Caddy got is read from the kernel (test/harness/ports.ts).
      'http://127.0.0.1:0 {',
      '  bind 127.0.0.1',
      headerBlock,
      versionBlock,
      ...env,
      ...git,
      '  respond "<p>hi</p>" 200',
      '}',
    ].join('\n')
    writeFileSync(join(root, 'Caddyfile'), caddyfile)
    const env_ = { ...process.env, XDG_DATA_HOME: root, XDG_CONFIG_HOME: root, HOME: root }
    const proc = Bun.spawn([CADDY, 'run', '--config', join(root, 'Caddyfile'), '--adapter', 'caddyfile'], {
      env: env_,
      stdout: 'pipe',
      stderr: 'pipe',
    })
    stops.push(() => proc.kill())
    const site = `http://127.0.0.1:${await boundPort(proc.pid, 10_000, 'Caddy')}`
    await until(async () => (await fetch(`${site}/`).catch(() => null)) !== null, 10_000, 'Caddy to answer')
    const page = await fetch(`${site}/`)
    for (const h of HEADERS) expect(page.headers.get(h.key)).toBe(h.value)
    expect(page.headers.get('server')).toBeNull()
    expect((await fetch(`${site}/.env`)).status).toBe(404)
    expect((await fetch(`${site}/.env.production`)).status).toBe(404)
    expect((await fetch(`${site}/.git/config`)).status).toBe(404)

    // Snippets that need an upstream or change cookies: the whole site block must validate.
    const upstream = (text: string) => braceBlock(text, 'reverse_proxy')
    const more = [
      '{',
      '  admin off',
      '}',
      'http://127.0.0.1:1 {',
      upstream(getCheck('debug-error-page')!.fix.caddy!),
      '}',
      'http://127.0.0.1:2 {',
      upstream(getCheck('cookie-secure')!.fix.caddy!),
      '}',
    ].join('\n')
    writeFileSync(join(root, 'More'), more)
    const check = Bun.spawnSync([CADDY, 'validate', '--config', join(root, 'More'), '--adapter', 'caddyfile'], { env: env_ })
    expect(`${check.stdout}${check.stderr}`).toContain('Valid configuration')
    expect(check.exitCode).toBe(0)
  }, 30_000)
})

describe('Express: the middleware runs in a real Express app', () => {
  test('sends every header as written', async () => {
    const app = express()
    const code = headerFixes(HEADERS).express.split('\n').slice(1).join('\n')
    new Function('app', code)(app)
    app.get('/', (_req, res) => {
      res.send('hi')
    })
    const server = app.listen(0, '127.0.0.1')
    stops.push(() => server.close())
    await new Promise<void>((resolve) => server.once('listening', () => resolve()))
    const { port } = server.address() as { port: number }
    const page = await fetch(`http://127.0.0.1:${port}/`)
    for (const h of HEADERS) expect(page.headers.get(h.key)).toBe(h.value)
  })
})

describe('IIS: web.config fragments are well-formed XML', () => {
  const fragments = () => {
    const checks = [
      'https-redirect',
      'version-disclosure',
      'exposed-env-file',
      'exposed-git-config',
      'directory-listing',
      'debug-error-page',
    ]
    return [
      block(headerFixes(HEADERS).iis, '<configuration>', '</configuration>'),
      ...checks.map((id) => {
        const text = getCheck(id)!.fix.iis!
        const lines = text.split('\n').filter((l) => l.trimStart().startsWith('<'))
        return `<configuration>${lines.join('\n')}</configuration>`
      }),
      `<configuration>${cookieFixes('SameSite')
        .iis.split('\n')
        .filter((l) => l.startsWith('<'))
        .join('')}</configuration>`,
    ]
  }

  test('each parses, and the CSP value reads back intact', async () => {
    for (const xml of fragments()) {
      const r = await validateXML({ xml: [{ fileName: 'web.config', contents: xml }], normalization: 'c14n' })
      expect(r.errors.map((e) => e.rawMessage)).toEqual([])
    }
    const value = /<add name="Content-Security-Policy" value="([^"]*)"/.exec(fragments()[0]!)![1]!
    expect(
      value
        .replace(/&quot;/g, '"')
        .replace(/&lt;/g, '<')
        .replace(/&amp;/g, '&'),
    ).toBe(POLICY)
  })
})

describe('Django: settings are valid Python', () => {
  test.skipIf(!Bun.which('python3'))('the settings and middleware parse, and CONTENT_SECURITY_POLICY evaluates to the policy', () => {
    // The whole snippet, prose included (it is written as comments).
    const code = headerFixes(HEADERS).django
    const script = [
      'import ast, sys, json',
      'src = sys.stdin.read()',
      'ast.parse(src)',
      'ns = {"MIDDLEWARE": []}',
      'exec(src, ns)',
      'print(json.dumps(ns["CONTENT_SECURITY_POLICY"]["DIRECTIVES"]))',
    ].join('\n')
    const r = Bun.spawnSync(['python3', '-c', script], { stdin: Buffer.from(code) })
    expect(r.stderr.toString()).toBe('')
    const directives = JSON.parse(r.stdout.toString()) as Record<string, string[]>
    const back = Object.entries(directives)
      .map(([k, v]) => [k, ...v].join(' '))
      .join('; ')
    expect(back).toBe(POLICY)
  })
})

describe('Rails: the snippets are valid Ruby, and the CSP block gives back the policy', () => {
  // Rails' own keyword mapping (ActionDispatch::ContentSecurityPolicy::MAPPINGS) for the symbols the snippets use.
  const MAPPINGS: Record<string, string> = {
    self: "'self'",
    none: "'none'",
    unsafe_inline: "'unsafe-inline'",
    unsafe_hashes: "'unsafe-hashes'",
    strict_dynamic: "'strict-dynamic'",
    data: 'data:',
    https: 'https:',
  }
  // A stand-in for Rails.application: records each policy directive call, as the real DSL receives it.
  const STUB = [
    'require "json"',
    'class Policy; attr_reader :calls; def initialize; @calls = []; end',
    '  def method_missing(name, *args); @calls << [name.to_s, args.map { |a| a.is_a?(Symbol) ? ":#{a}" : a }]; end',
    '  def respond_to_missing?(*) = true; end',
    'class Config; attr_reader :policy, :rest; def initialize; @policy = Policy.new; @rest = []; end',
    '  def content_security_policy; yield @policy; end',
    '  def method_missing(name, *args); @rest << name.to_s; self; end',
    '  def respond_to_missing?(*) = true; end',
    'class App; def config = (@config ||= Config.new); def configure(&b) = instance_eval(&b); end',
    'module Rails; def self.application = (@app ||= App.new); end',
    'def config = Rails.application.config',
  ].join('\n')

  test.skipIf(!Bun.which('ruby'))('every Rails snippet parses; the policy block evaluates to the computed policy', () => {
    const texts = [headerFixes(HEADERS).rails, ...(['Secure', 'HttpOnly', 'SameSite'] as const).map((a) => cookieFixes(a).rails)]
    for (const id of ['https-redirect', 'debug-error-page']) texts.push(getCheck(id)!.fix.rails!)
    for (const text of texts) {
      // Prose lines of the cookie advice are not code: keep the lines that are.
      const code = text
        .split('\n')
        .filter((l) => !/^(In |and )/.test(l))
        .join('\n')
      const r = Bun.spawnSync(['ruby', '-c', '-e', code])
      expect(`${r.stdout}${r.stderr}`).toContain('Syntax OK')
    }
    const csp = block(headerFixes(HEADERS).rails, 'Rails.application.configure do', 'end')
    const r = Bun.spawnSync(['ruby', '-e', `${STUB}\n${csp}\nputs JSON.generate(Rails.application.config.policy.calls)`])
    expect(r.stderr.toString()).toBe('')
    const calls = JSON.parse(r.stdout.toString()) as Array<[string, string[]]>
    const back = calls
      .map(([name, args]) => [name.replace(/_/g, '-'), ...args.map((a) => (a.startsWith(':') ? MAPPINGS[a.slice(1)]! : a))].join(' '))
      .join('; ')
    expect(back).toBe(POLICY)
  })
})
