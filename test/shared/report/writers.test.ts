// The export writers and the comparison on hand-made report models: hostile text in every field a target
// controls (URLs, summaries, evidence keys and values, control characters) must come out as text in every
// format, and the documents must stay valid against the SARIF and JUnit schemas. No service needed.
import { describe, expect, test } from 'bun:test'
import { compareReports } from '../../../api/reports/compare.ts'
import { toHtml } from '../../../api/reports/html.ts'
import { toJunit } from '../../../shared/report/export/junit.ts'
import { inlineCode, escapeMarkdown as md } from '../../../shared/report/export/escape.ts'
import { toMarkdown } from '../../../shared/report/export/markdown.ts'
import type { ModelFinding, ReportModel } from '../../../shared/report/export/model.ts'
import { fixFile, pageReference, repositoryPathOf, toSarif } from '../../../shared/report/export/sarif.ts'
import { githubSarifProblems, uriProblem } from '../../harness/github-sarif.ts'
import { junitSchemaErrors, sarifSchemaErrors } from '../../harness/report-formats.ts'
import { marked } from 'marked'

const EVIL = '</pre><script>alert(1)</script><img src=x onerror=alert(2)> | @octocat [x](javascript:alert(3)) ]]> \u0000\u0007\uFFFE'
const CTX = { baseUrl: 'https://www.appaudit.test', version: '9.9.9' }

/** Markdown as GitHub renders it (GFM: tables, autolinks, strikethrough), to HTML; raw HTML is passed through. */
const rendered = (markdown: string) => marked.parse(markdown, { gfm: true, async: false }) as string
const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" }
const decode = (s: string) =>
  s.replace(/&(amp|lt|gt|quot|#39|#(\d+)|#x([0-9a-f]+));/gi, (_, name: string, dec?: string, hex?: string) =>
    dec ? String.fromCodePoint(Number(dec)) : hex ? String.fromCodePoint(Number.parseInt(hex, 16)) : ENTITIES[name]!,
  )

function finding(checkId: string, i: number, over: Partial<ModelFinding> = {}): ModelFinding {
  return {
    fingerprint: `${checkId}:${i.toString(16).padStart(16, '0')}`,
    checkId,
    title: `Title of ${checkId}`,
    category: 'security',
    severity: 'high',
    status: 'fail',
    summary: `Found ${EVIL}`,
    evidence: { header: EVIL, [EVIL]: [EVIL, 42], nested: { deeper: EVIL } },
    impact: 25,
    pageCount: 1,
    pages: [`http://shop.test/${encodeURIComponent(EVIL)}`],
    ...over,
  }
}

function model(over: Partial<ReportModel> = {}): ReportModel {
  const findings = over.findings ?? [
    finding('csp', 1),
    finding('x-content-type-options', 2, { severity: 'low', status: 'warn', impact: 2 }),
  ]
  return {
    kind: 'scan',
    id: 'scn_test1',
    url: `http://shop.test/?q=${EVIL}`,
    finalUrl: 'http://shop.test/',
    score: 73,
    grade: 'B',
    checksVersion: '2026.11.3',
    createdAt: '2026-11-23T15:40:02.118Z',
    summary: { pass: 1, fail: 1, warn: 1, info: 0, skipped: 1, error: 1 },
    checks: [
      { id: 'csp', title: 'CSP', category: 'security', severity: 'high', status: 'fail', summary: EVIL },
      { id: 'x-content-type-options', title: 'XCTO', category: 'security', severity: 'low', status: 'warn', summary: EVIL },
      { id: 'hsts', title: 'HSTS', category: 'https', severity: 'high', status: 'skipped', summary: EVIL },
      { id: 'tls-certificate', title: 'TLS', category: 'https', severity: 'critical', status: 'error', summary: EVIL },
      { id: 'seo-title', title: 'Title', category: 'seo', severity: 'low', status: 'pass', summary: EVIL },
    ],
    findings,
    platform: 'vercel',
    ...over,
  }
}

describe('export writers on hostile input', () => {
  test('the schema validators refuse what their schemas forbid (so a pass means something)', async () => {
    const log = JSON.parse(toSarif(model(), CTX))
    log.runs[0].results[0].level = 'fatal'
    delete log.runs[0].tool
    expect(sarifSchemaErrors(log).length).toBeGreaterThan(0)
    expect(await junitSchemaErrors('<testsuite name="x"><testcase/></testsuite>')).not.toEqual([])
    expect(await junitSchemaErrors('<testsuite name="x" tests="1"><testcase name="a"><skipped message="m"/></testcase>')).not.toEqual([])
  })

  test('SARIF stays schema-valid and points a header fix at the platform file', () => {
    const log = JSON.parse(toSarif(model(), CTX))
    expect(sarifSchemaErrors(log)).toEqual([])
    const [csp] = log.runs[0].results
    expect(csp.relatedLocations.map((l: any) => l.physicalLocation.artifactLocation)).toEqual([
      { uri: 'vercel.json', uriBaseId: '%SRCROOT%' },
    ])
    expect(log.runs[0].results[1].level).toBe('note')
    expect(fixFile('csp', 'generic')).toBeNull()
    expect(fixFile('csp', 'nextjs')).toBe('next.config.js')
    // A served .env on Netlify is fixed in netlify.toml; on Next.js it is the public/ directory, no one file.
    expect(fixFile('exposed-env-file', 'netlify')).toBe('netlify.toml')
    expect(fixFile('exposed-env-file', 'nextjs')).toBeNull()
  })

  test('SARIF keeps every rule GitHub code scanning applies (the checker refuses what breaks them)', () => {
    const log = JSON.parse(toSarif(model(), CTX))
    expect(githubSarifProblems(log)).toEqual([])
    // The checker is not a rubber stamp: each broken rule is named.
    const broken = JSON.parse(toSarif(model(), CTX))
    const [r0, r1] = broken.runs[0].results
    r0.locations[0].physicalLocation.artifactLocation.uri = 'http://127.0.0.1:4321/'
    r1.locations[0].physicalLocation.region = undefined
    delete r1.partialFingerprints
    broken.runs[0].tool.driver.rules[0].properties['security-severity'] = 'high'
    delete broken.runs[0].tool.driver.rules[1].fullDescription
    expect(githubSarifProblems(broken)).toEqual([
      'runs[0].rules[0]: security-severity high',
      'runs[0].rules[1]: no fullDescription.text',
      'runs[0].results[0].locations[0]: SARIF URI scheme "http" did not match the checkout URI scheme "file"',
      'runs[0].results[1].locations[0]: no region.startLine of 1 or more',
      'runs[0].results[1]: no partialFingerprints',
    ])
    expect(uriProblem('../outside')).toBe('../outside leaves the checkout')
    expect(uriProblem('file:///home/runner/work/app/vercel.json')).toBeNull()
  })

  test('SARIF locates a result at a repository path, never at the page URL, and keeps the URL in the message', () => {
    const page = 'http://localhost:4321/checkout/pay?step=2#card'
    const m = model({ url: page, findings: [finding('csp', 1, { pages: [page] })] })
    const run = JSON.parse(toSarif(m, CTX)).runs[0]
    const [r] = run.results
    // localhost:4321 would read as the scheme "localhost": the port goes, and the query and fragment with it.
    expect(r.locations[0].physicalLocation).toEqual({ artifactLocation: { uri: 'localhost/checkout/pay' }, region: { startLine: 1 } })
    expect(r.message.text).toContain(`Page: ${page}`)
    expect(r.properties.page).toBe(page)
    expect(run.automationDetails.id).toBe('appaudit/localhost/')
    // A path the user maps the app to wins, relative to the repository root.
    const mapped = JSON.parse(toSarif(m, { ...CTX, repositoryPath: './app/layout.tsx' })).runs[0].results[0]
    expect(mapped.locations[0].physicalLocation.artifactLocation).toEqual({ uri: 'app/layout.tsx', uriBaseId: '%SRCROOT%' })
    // A mapped path that names a scheme or climbs out is not used.
    for (const bad of ['https://example.com/x', '../x', '']) expect(repositoryPathOf(bad)).toBeNull()
    // Hosts of every shape stay a relative reference: an IPv6 literal, an IP, a name with a port.
    for (const url of ['http://[::1]:8080/a', 'http://127.0.0.1:9/', 'https://app.example.com/a%20b/c:d', 'not a url']) {
      expect(uriProblem(pageReference(url))).toBeNull()
    }
    expect(pageReference('https://app.example.com/a%20b/c:d')).toBe('app.example.com/a%20b/c%3Ad')
  })

  test('JUnit stays schema-valid, with the evidence and control characters escaped', async () => {
    const xml = toJunit(model())
    expect(await junitSchemaErrors(xml)).toEqual([])
    expect(xml).not.toMatch(/<script|<img|<\/pre>/)
    expect(xml.includes(String.fromCharCode(0)) || xml.includes(String.fromCharCode(7))).toBe(false)
    expect(xml).toContain('<error type="error"')
    expect(xml).toContain('<skipped/>')
  })

  test('Markdown renders target text as text: no tags, forged links, cell breaks or mentions', () => {
    const md = toMarkdown(model())
    const html = rendered(md)
    // Rendered as GitHub would (GFM), nothing of the target became markup.
    expect(html).not.toMatch(/<(script|img|iframe)\b|<[^>]*\son[a-z]+=/i)
    // The only <pre> are the evidence's code blocks: the target's </pre> closed nothing.
    expect(html.match(/<pre>/g)).toHaveLength(2)
    expect(html.match(/<pre><code class="language-json">/g)).toHaveLength(2)
    // Every link GFM made shows its own address: none is forged, none runs script.
    for (const [, href, text] of html.matchAll(/<a href="([^"]*)"[^>]*>([\s\S]*?)<\/a>/g)) {
      expect(href).not.toMatch(/^javascript:/i)
      expect(decode(text!.replace(/<[^>]+>/g, ''))).toBe(decodeURI(decode(href!)))
    }
    // No @mention GitHub would act on (it skips code blocks): a zero-width space follows the @.
    expect(decode(html.replace(/<pre>[\s\S]*?<\/pre>/g, '').replace(/<[^>]+>/g, ''))).not.toMatch(/@octocat/)
    // Each table row keeps its five cells: a pipe from the target never splits one.
    const rows = [...html.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((m) => [...m[1]!.matchAll(/<td[^>]*>/g)].length)
    expect(rows).toEqual([0, 5, 5])
    // Unrendered it reads as text too: no HTML entity outside the evidence's code blocks but &lt; for a <.
    expect(md.replace(/```json[\s\S]*?```/g, '').replace(/&lt;/g, '')).not.toMatch(/&#?[a-z0-9]+;/i)
    // The evidence is indented JSON in a fenced block, as it is (quotes and @ included).
    expect(md).toContain('```json\n{\n  "header": "</pre><script>alert(1)</script>')
    expect(md.indexOf('```json')).toBeGreaterThan(md.indexOf('<details>'))
  })

  test('Markdown keeps ordinary text as it is and round-trips hostile text through a renderer', () => {
    const plain = [
      'Access-Control-Allow-Origin is * on http://shop.test/api/users?id=1&sort=asc',
      'x_content_type, csrf_token and session-id (3 cookies): 50% of 12.5 KB, a - b + c = d',
      "Content-Security-Policy: default-src 'self'; script-src https://cdn.example.com",
    ]
    for (const text of plain) expect(md(text)).toBe(text)
    const hostile = [
      // EVIL without its control characters, which become U+FFFD (tested with JUnit above).
      [...EVIL].filter((c) => c.charCodeAt(0) >= 0x20 && c !== '\uFFFE').join(''),
      '# heading? - list? > quote? 1. ordered?',
      '*bold* _em_ __strong__ ~~gone~~ ~one~ `code` $x$ and $y$',
      '![img](http://evil.test/x.png) <http://evil.test> [a][1] [^note] &lt;b&gt; &amp; &#64;',
      '[Click here](http://evil.test) <a href="http://evil.test">here</a> \\*still text\\*',
      '- item',
      '1) first',
      '_ _ _',
      'ends with a backslash \\',
      'mail me@example.com, see #12, ping @octocat and @org/team',
    ]
    for (const text of [...plain, ...hostile]) {
      const html = rendered(`Before ${md(text)}`)
      // One paragraph of text and nothing else: no heading, list, quote, emphasis, code, image or tag.
      expect(html.replace(/<a href="[^"]*">|<\/a>/g, '')).toMatch(/^<p>[^<]*<\/p>\n$/)
      // marked (unlike GitHub, which links after decoding) takes an entity right after a URL into its autolink
      // and shows it undecoded there: the link's text is decoded once more, which makes no tag either way.
      const unlinked = html.replace(/<a href="[^"]*">([\s\S]*?)<\/a>/g, (_, t: string) => decode(t))
      expect(
        decode(unlinked.replace(/<[^>]+>/g, ''))
          .replace(/\u200B/g, '')
          .trim(),
      ).toBe(`Before ${text.replace(/\s+/g, ' ').trim()}`)
    }
    // Line starts are escaped only where they would open a block.
    expect(md('# heading')).toBe('\\# heading')
    expect(md('1) first')).toBe('1\\) first')
    expect(md('#12 and @octocat')).toBe('#\u200B12 and @\u200Boctocat')
    expect(inlineCode('a ``b`` c')).toBe('```a ``b`` c```')
  })

  test('HTML is one standalone page with no script, handler or remote resource', () => {
    const html = toHtml(model({ kind: 'audit', findings: [finding('csp', 1, { pageCount: 3 })] }))
    expect(html).not.toMatch(/<(script|img|link|iframe|object)\b|<[^>]*\son[a-z]+=|<[^>]*\ssrc=/i)
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;')
    expect(html).toContain('<meta http-equiv="Content-Security-Policy" content="default-src \'none\';')
  })
})

describe('compareReports', () => {
  test('caps each list at 50 in impact order and gives the totals in counts', () => {
    const many = (from: number, n: number, impact: (i: number) => number) =>
      Array.from({ length: n }, (_, i) => finding(`check-${from + i}`, from + i, { impact: impact(i) }))
    const base = model({ findings: many(0, 70, (i) => i % 7) })
    const head = model({ id: 'scn_test2', score: 40, grade: 'D+', findings: [...many(0, 10, () => 1), ...many(1000, 60, (i) => i % 5)] })
    const r = compareReports(base, head)
    expect(r.counts).toEqual({ new: 60, fixed: 60, unchanged: 10 })
    expect(r.findings.new).toHaveLength(50)
    expect(r.findings.fixed).toHaveLength(50)
    const impacts = r.findings.new.map((f) => f.impact)
    expect(impacts).toEqual([...impacts].sort((a, b) => b - a))
    expect(r.summary).toStartWith('Score 73 -> 40 (-33, B -> D+): 60 fixed, 60 new (')
    expect(r.summary).toContain(', and 57 more), 10 unchanged.')
  })
})
