// The public documents, the /docs pages and the front page, against the real service.
//
// The docs' runnable examples, by convention (docs/getting-started.md, "About the examples"):
//   - a fenced block with the info string `sh` that calls curl is run with bash (-e, pipefail; bounded by
//     `timeout`), with BASE set to the service's base URL and KEY to a fresh act_ key of a new account;
//   - when the next fenced block is `json`, the command's output must match it structurally: the same keys;
//     literal values equal, except the string "..." which matches any string; an array is compared by its
//     first element (an empty one must be empty);
//   - blocks fenced `text` (and `sh` blocks without curl, such as `export BASE=...`) are never run.
// The examples are read from the markdown the service serves (/docs/{page}.md), so they are the ones
// readers copy.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Lexer, walkTokens, type Token } from 'marked'
import { DOCS_DIR, publicRoutes } from '../../api/public/index.ts'
import { stripFrontMatter } from '../../api/public/markdown.ts'
import { TOOLS } from '../../api/mcp/tools/registry.ts'
import { CHECKS } from '../../shared/checks/registry.ts'
import { ERROR_CODES } from '../../shared/errors.ts'
import { startService, type TestService } from '../harness/service.ts'

const EXAMPLE_TIMEOUT_S = 20
const PAGES = readdirSync(DOCS_DIR)
  .filter((f) => /^[a-z0-9][a-z0-9-]*\.md$/.test(f))
  .map((f) => f.slice(0, -3))
  .sort()

let svc: TestService
let baseUrl: string

beforeAll(async () => {
  svc = await startService('embedded', { ROLE: 'api' })
  baseUrl = svc.running.services.config.baseUrl
})
afterAll(() => svc?.stop())

const get = (path: string, headers: Record<string, string> = {}) => fetch(svc.url + path, { headers, redirect: 'manual' })
const text = async (path: string) => {
  const res = await get(path)
  expect(res.status).toBe(200)
  return res.text()
}

describe('the public documents', () => {
  test.each([
    ['/llms.txt', 'text/plain'],
    ['/llms-full.txt', 'text/plain'],
    ['/api/skills.md', 'text/markdown'],
    ['/agent-prompt', 'text/plain'],
    ['/docs/tools.md', 'text/markdown'],
  ])('%s answers without authentication as %s, to any origin, cached for an hour', async (path, type) => {
    const res = await get(path, { origin: 'https://elsewhere.example' })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe(`${type}; charset=utf-8`)
    expect(res.headers.get('access-control-allow-origin')).toBe('*')
    expect(res.headers.get('cache-control')).toBe('public, max-age=3600')
    expect((await res.text()).length).toBeGreaterThan(200)
  })

  test('llms.txt follows the llms.txt convention and every link it gives answers', async () => {
    const body = await text('/llms.txt')
    expect(body.startsWith('# App Audit\n\n> ')).toBe(true)
    expect(body).toContain(`${baseUrl}/api/mcp`)
    const links = [...body.matchAll(/^- \[[^\]]+\]\(([^)]+)\)/gm)].map((m) => m[1]!)
    for (const page of PAGES.filter((p) => p !== 'agent-skill' && p !== 'agent-prompt')) {
      expect(links).toContain(`${baseUrl}/docs/${page}.md`)
    }
    expect(links).toContain(`${baseUrl}/api/skills.md`)
    expect(links).toContain(`${baseUrl}/agent-prompt`)
    for (const link of links) expect((await get(link.slice(baseUrl.length))).status).toBe(200)
  })

  test('llms-full.txt holds every page of docs/ in full', async () => {
    const full = await text('/llms-full.txt')
    for (const page of PAGES) {
      const served = stripFrontMatter(await text(`/docs/${page}.md`)).trim()
      expect(full).toContain(served)
    }
  })

  test("the documents show this deployment's base URL, never the {base} placeholder", async () => {
    for (const path of ['/llms.txt', '/llms-full.txt', '/api/skills.md', '/agent-prompt']) {
      const body = await text(path)
      expect(body).not.toContain('{base}')
      expect(body).toContain(baseUrl)
    }
    expect(await text('/agent-prompt')).toContain(`${baseUrl}/api/mcp`)
  })

  test('the skill is an agent skill: front matter with a name and a description, and the live-link rule', async () => {
    const skill = await text('/api/skills.md')
    expect(skill).toMatch(/^---\nname: [a-z0-9-]+\ndescription: .{40,}\n---\n/)
    expect(skill).toContain('browserViewer')
    expect(skill).toContain('get_audit')
  })
})

describe('the references cannot drift from the registries', () => {
  test('every tool of the registry has a section with its arguments in the tools page', async () => {
    const page = await text('/docs/tools.md')
    expect(TOOLS.length).toBe(18)
    for (const tool of TOOLS) {
      expect(page).toContain(`### \`${tool.name}\``)
      expect(page).toContain(tool.description)
      const schema = JSON.parse(JSON.stringify(tool.input)) as { properties: Record<string, unknown> }
      for (const arg of Object.keys(schema.properties)) expect(page).toContain(`| \`${arg}\` |`)
    }
    expect(page).not.toMatch(/^\{tool:/m)
  })

  test('every check of the registry is in the checks page with its title and category', async () => {
    const page = await text('/docs/checks.md')
    for (const check of CHECKS) {
      expect(page).toContain(`#### \`${check.id}\``)
      expect(page).toContain(`**${check.title}** · category \`${check.category}\``)
    }
  })

  test('every tool error code is in the errors page', async () => {
    const page = await text('/docs/errors.md')
    for (const code of Object.keys(ERROR_CODES)) expect(page).toContain(`| \`${code}\` |`)
  })
})

describe('the /docs pages', () => {
  const cspNonce = (res: Response) => /'nonce-([^']+)'/.exec(res.headers.get('content-security-policy') ?? '')?.[1]

  test.each(['/docs', ...PAGES.map((p) => `/docs/${p}`)])('%s is an HTML page with the headers of every page', async (path) => {
    const res = await get(path)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(res.headers.get('cache-control')).toBe('no-store')
    expect(res.headers.get('x-frame-options')).toBe('DENY')
    expect(res.headers.get('access-control-allow-origin')).toBeNull()
    const csp = res.headers.get('content-security-policy') ?? ''
    expect(csp).toContain("frame-ancestors 'none'")
    expect(csp).toContain("default-src 'none'")
    const html = await res.text()
    // Every style element carries this response's nonce; no script at all.
    expect([...html.matchAll(/<style nonce="([^"]+)">/g)].map((m) => m[1])).toEqual([cspNonce(res), cspNonce(res)])
    expect(html).not.toContain('<script')
  })

  test('the index links every page, and every link between pages lands on a heading that exists', async () => {
    const index = await (await get('/docs')).text()
    for (const page of PAGES) expect(index).toContain(`href="/docs/${page}"`)
    const ids = new Map<string, Set<string>>()
    const idsOf = async (page: string) => {
      if (!ids.has(page)) ids.set(page, new Set([...(await text(`/docs/${page}`)).matchAll(/ id="([^"]+)"/g)].map((m) => m[1]!)))
      return ids.get(page)!
    }
    for (const page of PAGES) {
      const html = await text(`/docs/${page}`)
      for (const [, target, fragment] of html.matchAll(/href="\/docs\/([a-z0-9-]+)(?:#([^"]*))?"/g)) {
        expect(PAGES).toContain(target!)
        if (fragment) expect([...(await idsOf(target!))]).toContain(fragment)
      }
    }
  })

  test('markup written in the docs is shown as text, never passed through', async () => {
    // The csp check's description names <meta http-equiv="Content-Security-Policy">: it must stay text.
    const html = await text('/docs/checks')
    expect(html).toContain('&lt;meta http-equiv=')
    expect(html).not.toContain('<meta http-equiv=')
    expect(html).toContain('id="csp"')
  })

  test('raw HTML and script links in a page are escaped or dropped', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'appaudit-docs-'))
    try {
      writeFileSync(join(dir, 'agent-skill.md'), '---\nname: x\ndescription: y\n---\n\n# Skill\n\nText.\n')
      writeFileSync(join(dir, 'agent-prompt.md'), '# Prompt\n\nText.\n')
      writeFileSync(
        join(dir, 'hostile.md'),
        [
          '# Hostile <img src=x onerror=alert(1)>',
          '',
          '<script>alert(1)</script>',
          '',
          '<div onclick="alert(2)">block</div>',
          '',
          'Inline <b onmouseover="alert(3)">tag</b>, [a](javascript:alert(4)), [b](JaVa\tScRiPt:alert(5)),',
          '[c](data:text/html,<script>alert(6)</script>), ![d](javascript:alert(7)) and [e](agent-prompt.md#prompt).',
        ].join('\n'),
      )
      const app = publicRoutes({ baseUrl: 'http://docs.test', version: '0.0.0', docsDir: dir })
      const res = await app.handle(new Request('http://docs.test/docs/hostile'))
      expect(res.status).toBe(200)
      const html = await res.text()
      const article = html.slice(html.indexOf('<article'), html.indexOf('</article>'))
      expect(article).not.toMatch(/<(script|img|div|b)\b/i)
      expect(article).not.toMatch(/href="(?!\/docs\/)/)
      expect(article).toContain('&lt;script&gt;alert(1)&lt;/script&gt;')
      expect(article).toContain('href="/docs/agent-prompt#prompt"')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('an unknown page is 404', async () => {
    for (const path of ['/docs/nope', '/docs/nope.md', '/docs/..%2fREADME.md', '/docs/.md']) expect((await get(path)).status).toBe(404)
  })
})

describe('the front page', () => {
  test('a browser gets an HTML page linking the docs, the dashboard, sign-in and llms.txt', async () => {
    const res = await get('/', { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(res.headers.get('vary')).toBe('accept')
    expect(res.headers.get('x-frame-options')).toBe('DENY')
    const html = await res.text()
    for (const href of ['/docs', '/dashboard', '/auth/login', '/llms.txt']) expect(html).toContain(`href="${href}"`)
    expect(html).toContain(`${baseUrl}/api/mcp`)
  })

  test('curl gets the plain text with the MCP endpoint', async () => {
    for (const accept of ['*/*', null]) {
      const res = await get('/', accept ? { accept } : {})
      expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8')
      expect(res.headers.get('vary')).toBe('accept')
      expect(await res.text()).toMatch(new RegExp(`^App Audit \\S+\\nMCP endpoint: ${baseUrl.replace(/[.]/g, '\\.')}/api/mcp `))
    }
  })
})

interface Example {
  page: string
  command: string
  expected: string | null
}

/** The curl examples of a page's markdown, each with the json block that follows it, if any. */
function examplesOf(page: string, markdown: string): Example[] {
  const blocks: Array<{ lang: string; text: string }> = []
  walkTokens(Lexer.lex(markdown), (t: Token) => {
    if (t.type === 'code') blocks.push({ lang: (t.lang ?? '').trim(), text: t.text })
  })
  return blocks.flatMap((b, i) =>
    b.lang === 'sh' && /\bcurl\b/.test(b.text)
      ? [{ page, command: b.text, expected: blocks[i + 1]?.lang === 'json' ? blocks[i + 1]!.text : null }]
      : [],
  )
}

/** Where actual differs from the expected shape (see the convention at the top), or null when it matches. */
function shapeMismatch(expected: unknown, actual: unknown, path = '$'): string | null {
  if (expected === '...') return typeof actual === 'string' ? null : `${path}: expected any string, got ${JSON.stringify(actual)}`
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return `${path}: expected an array, got ${JSON.stringify(actual)}`
    if (expected.length === 0) return actual.length === 0 ? null : `${path}: expected an empty array, got ${actual.length} items`
    if (actual.length === 0) return `${path}: expected items like ${JSON.stringify(expected[0])}, got an empty array`
    return shapeMismatch(expected[0], actual[0], `${path}[0]`)
  }
  if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual))
      return `${path}: expected an object, got ${JSON.stringify(actual)}`
    const want = Object.keys(expected).sort()
    const got = Object.keys(actual).sort()
    if (want.join() !== got.join()) return `${path}: expected keys ${want.join(', ')}, got ${got.join(', ')}`
    for (const k of want) {
      const m = shapeMismatch((expected as Record<string, unknown>)[k], (actual as Record<string, unknown>)[k], `${path}.${k}`)
      if (m) return m
    }
    return null
  }
  return Object.is(expected, actual) ? null : `${path}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`
}

async function run(example: Example, key: string): Promise<string | null> {
  const proc = Bun.spawn(['timeout', String(EXAMPLE_TIMEOUT_S), 'bash', '-c', `set -eo pipefail\n${example.command}`], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: tmpdir(), BASE: svc.url, KEY: key },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  const where = `docs/${example.page}.md: ${example.command.split('\n')[0]}...`
  if (code !== 0) return `${where} exited ${code}${code === 124 ? ' (timed out)' : ''}: ${err.trim() || out.trim()}`
  if (example.expected === null) return null
  let actual: unknown
  try {
    actual = JSON.parse(out)
  } catch {
    return `${where} printed no single JSON value: ${out.trim().slice(0, 300)}`
  }
  const mismatch = shapeMismatch(JSON.parse(example.expected), actual)
  return mismatch && `${where} ${mismatch}\n  output: ${out.trim().slice(0, 500)}`
}

describe('the runnable examples in the docs', () => {
  const found: Example[] = []

  test.each(PAGES)('every curl example of docs/%s.md runs and answers as shown', async (page) => {
    const examples = examplesOf(page, await text(`/docs/${page}.md`))
    found.push(...examples)
    const failures: string[] = []
    for (const example of examples) {
      const failure = await run(example, await svc.key())
      if (failure) failures.push(failure)
    }
    expect(failures).toEqual([])
  })

  test('the docs have runnable examples, most with the answer they show', () => {
    expect(found.length).toBeGreaterThanOrEqual(8)
    expect(found.filter((e) => e.expected !== null).length).toBeGreaterThanOrEqual(6)
  })
})
