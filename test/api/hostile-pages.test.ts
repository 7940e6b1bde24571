// Every server-rendered page, rendered twice from the same shape of data: once with plain text, once with
// hostile text in every field a target, a client or a user controls (titles, URLs, evidence with <script>,
// quotes of both kinds, javascript: URLs). The hostile rendering must have exactly the elements and
// attributes of the plain one (nothing it carried became markup), no event-handler attribute, no
// javascript: address, and the hostile text must be there as text. No service needed.
import { describe, expect, test } from 'bun:test'
import { appsPage, dashboardPage, settingsPage } from '../../api/dashboard/pages.ts'
import { htmlPage, layout } from '../../api/http/layout.ts'
import { consentPage } from '../../api/oauth/consent-page.ts'
import { markdownRenderer } from '../../api/public/markdown.ts'
import { docPageBody, docsIndexBody, frontPageBody, NAV } from '../../api/public/pages.ts'
import { badgeSection, reportBody } from '../../api/report-pages/pages.ts'
import type { ReportPageData } from '../../api/report-pages/service.ts'
import { toHtml } from '../../api/reports/html.ts'
import type { ModelFinding, ReportModel } from '../../shared/report/export/model.ts'
import { viewerPage } from '../../api/viewer/page.ts'
import { html, raw } from '../../shared/lib/html.ts'

const SCRIPT = '<script>alert(1)</script>'
const EVIL = `"'><img src=x onerror=alert(2)>${SCRIPT}<!--`
const EVIL_URL = `javascript:alert(3)//"' onmouseover="alert(4)"><a href="javascript:alert(5)">${SCRIPT}`

/** Plain text or hostile text for a field, by mode: the same truthiness and about the same length either way. */
type Text = (name: string) => string
const plain: Text = (name) => `plain ${name}`
const hostile: Text = (name) => `${name} ${EVIL}`
const urlOf = (t: Text) => (t === plain ? 'https://plain.test/page' : EVIL_URL)

/** Tag names and attribute names of every element, in document order. */
function structure(doc: string): string[] {
  const out: string[] = []
  new HTMLRewriter()
    .on('*', {
      element(e) {
        out.push(`${e.tagName}[${[...e.attributes].map(([k]) => k).join(' ')}]`)
      },
    })
    .transform(doc)
  return out
}

/** Attributes that would run code or send a person to a javascript: address. */
function dangers(doc: string): string[] {
  const found: string[] = []
  new HTMLRewriter()
    .on('*', {
      element(e) {
        for (const [k, v] of e.attributes) {
          if (/^on/i.test(k)) found.push(`${e.tagName} ${k}`)
          if (/^(href|src|action|formaction)$/i.test(k) && /^\s*javascript:/i.test(v)) found.push(`${e.tagName} ${k}=${v}`)
        }
      },
    })
    .transform(doc)
  return found
}

/** The page rendered both ways must have one structure, and the hostile one no danger and the text as text. */
async function expectInert(render: (t: Text) => string | Response | { toString(): string }) {
  const text = async (r: string | Response | { toString(): string }) => (r instanceof Response ? await r.text() : String(r))
  const good = await text(render(plain))
  const bad = await text(render(hostile))
  expect(structure(bad)).toEqual(structure(good))
  expect(dangers(bad)).toEqual([])
  expect(bad).not.toContain(SCRIPT)
  expect(bad).not.toContain('<img src=x')
  expect(bad).toContain('&lt;script&gt;alert(1)&lt;/script&gt;')
}

function finding(t: Text, i: number): ModelFinding {
  return {
    fingerprint: `csp:${i}`,
    checkId: 'csp',
    title: t('finding title'),
    category: 'security',
    severity: 'high',
    status: 'fail',
    summary: t('summary'),
    evidence: { header: t('evidence'), [t('key')]: [t('item'), 42] },
    impact: 25,
    pageCount: 2,
    pages: [urlOf(t), t('page')],
  }
}

function model(t: Text, kind: 'scan' | 'audit'): ReportModel {
  return {
    kind,
    id: t('id'),
    url: urlOf(t),
    finalUrl: urlOf(t),
    score: 73,
    grade: 'B',
    checksVersion: t('version'),
    createdAt: t('created'),
    summary: { pass: 1, fail: 1, warn: 0, info: 0, skipped: 0, error: 0 },
    checks: [{ id: 'csp', title: t('check title'), category: 'security', severity: 'high', status: 'fail', summary: t('check summary') }],
    findings: [finding(t, 1), finding(t, 2)],
    platform: 'vercel',
  }
}

function reportData(t: Text, kind: 'scan' | 'audit', status: ReportPageData['status']): ReportPageData {
  const done = status === 'completed'
  return {
    kind,
    id: t('id'),
    url: urlOf(t),
    status,
    createdAt: new Date('2026-11-23T15:40:00Z'),
    finishedAt: status === 'running' ? null : new Date('2026-11-23T15:45:00Z'),
    error: status === 'failed' ? { code: t('code'), message: t('message') } : null,
    progress: { pagesDiscovered: 9, pagesScanned: 4, pagesFailed: 1, currentUrl: urlOf(t) },
    model: done ? model(t, kind) : null,
    fixOf: () => ({ change: t('change'), where: t('where'), verify: t('verify'), platformSpecific: true }),
    pages: [
      {
        url: urlOf(t),
        finalUrl: urlOf(t),
        depth: 1,
        httpStatus: 200,
        ok: false,
        error: t('page error'),
        loadMs: 120,
        score: 70,
        grade: 'C',
        checks: [{ id: 'csp', status: 'fail', severity: 'high', summary: t('page check') }],
      },
    ],
    stoppedBy: null,
    slug: null,
  } as ReportPageData
}

const owner = (t: Text) => ({
  csrf: t('csrf'),
  actionBase: '/dashboard/audits/aud_1',
  publicUrl: 'https://appaudit.test/r/abc',
  notice: { text: t('notice'), bad: true },
})

const when = new Date('2026-11-23T15:40:00Z')

describe('every page renders hostile data as text', () => {
  test('the check catches text that became markup (so a pass means something)', async () => {
    await expect(expectInert((t) => html`<p title="${t('title')}">${raw(t('body'))}</p>`)).rejects.toThrow()
    await expect(expectInert((t) => html`<a href="${urlOf(t)}">${t('body')}</a>`)).rejects.toThrow()
  })

  test('the layout and a plain page', async () => {
    await expectInert((t) => layout({ title: t('title'), nonce: 'n0nce', body: html`<p>${t('body')}</p>`, nav: NAV }))
    await expectInert((t) => htmlPage(400, t('title'), html`<p>${t('body')}</p>`))
  })

  test('the report page of a scan and an audit, the owner’s and the public one, in every state', async () => {
    for (const kind of ['scan', 'audit'] as const) {
      for (const status of ['running', 'completed', 'failed'] as const) {
        const at = { pages: 1, findings: 1 }
        await expectInert((t) => reportBody(reportData(t, kind, status), { at, linkBase: '/dashboard/x', owner: owner(t) }))
        await expectInert((t) =>
          reportBody(reportData(t, kind, status), {
            at,
            linkBase: '/r/abc',
            afterScore: badgeSection('https://appaudit.test/r/abc', reportData(t, kind, status).model),
          }),
        )
      }
    }
  })

  test('the dashboard’s apps and settings pages', async () => {
    const monitor = (t: Text) => ({
      id: t('monitor'),
      url: urlOf(t),
      origin: urlOf(t),
      schedule: 'daily',
      hour: 3,
      weekday: null,
      enabled: true,
      nextRunAt: when,
      notifyOn: 'regression',
      lastScore: 70,
      lastGrade: t('grade'),
      openRegressions: 1,
      openRuns: [],
      runs: [
        {
          id: t('run'),
          scanId: t('scan'),
          status: 'completed',
          score: 70,
          previousScore: 80,
          regressions: [{ kind: 'finding', change: 'new', status: 'fail', checkId: 'csp', summary: t('regression'), resolvedAt: null }],
          improvements: [],
          alert: true,
          error: null,
          createdAt: when,
        },
      ],
    })
    const app = (t: Text) => ({
      origin: urlOf(t),
      latestCompletedScan: { id: t('scan'), score: 70, grade: t('grade'), createdAt: when },
      recentScans: [{ id: t('scan'), url: urlOf(t), status: 'completed', score: 70, grade: t('grade'), createdAt: when }],
      recentAudits: [
        {
          id: t('audit'),
          url: urlOf(t),
          status: 'running',
          pagesScanned: 1,
          pagesDiscovered: 2,
          score: null,
          grade: null,
          createdAt: when,
        },
      ],
      monitor: monitor(t),
    })
    await expectInert((t) =>
      appsPage([app(t)] as never, t('csrf'), t('user'), { kind: 'audit', error: t('error'), values: { url: urlOf(t), maxPages: t('n') } }),
    )
    await expectInert((t) =>
      settingsPage(
        {
          keys: [{ id: t('key'), displayPrefix: t('prefix'), label: t('label'), createdAt: when, lastUsedAt: null }],
          agents: [{ clientId: t('client'), clientName: t('client name'), createdAt: when, lastUsedAt: when, tokens: 1 }],
          billing: {
            plan: 'free',
            allowance: 3,
            used: 1,
            left: 2,
            credits: 0,
            resetsAt: when.toISOString(),
            graceUntil: when.toISOString(),
            subscribed: false,
            offers: ['credits', 'launch'],
            creditsPerPack: 10,
          },
          mcpUrl: urlOf(t),
          repository: {
            available: true,
            connection: { id: t('repo'), url: urlOf(t), baseBranch: t('branch'), createdAt: when, lastUsedAt: null },
            error: t('repository error'),
          },
        },
        t('csrf'),
        t('user'),
      ),
    )
    await expectInert((t) =>
      settingsPage(
        {
          keys: [],
          agents: [],
          billing: {
            plan: 'scale',
            allowance: 3,
            used: 0,
            left: 3,
            credits: 1,
            resetsAt: when.toISOString(),
            graceUntil: null,
            subscribed: true,
            offers: [],
            creditsPerPack: 10,
          },
          mcpUrl: urlOf(t),
          repository: { available: true, connection: null, error: t('refused'), values: { url: urlOf(t), baseBranch: t('branch') } },
        },
        t('csrf'),
        t('user'),
      ),
    )
    await expectInert((t) => dashboardPage(t('title'), html`<p>${t('body')}</p>`, t('csrf'), t('user')))
  })

  test('the consent screen', async () => {
    await expectInert((t) =>
      consentPage({
        request: {
          clientId: t('client'),
          clientName: t('client name'),
          redirectUri: `http://127.0.0.1/${encodeURIComponent(t('path'))}`,
          codeChallenge: t('challenge'),
          state: t('state'),
          resource: null,
        },
        requestId: t('request'),
        csrfToken: t('csrf'),
        userLabel: t('user'),
      }),
    )
  })

  test('the live viewer', async () => {
    await expectInert((t) => viewerPage(t('audit'), 'https://appaudit.test/'))
  })

  test('the docs: front page, index and a page whose markdown is hostile', async () => {
    const render = markdownRenderer(new Set(['tools']))
    const page = (t: Text) => ({
      slug: t('slug'),
      title: t('title'),
      summary: t('summary'),
      section: 'docs' as const,
      markdown: '',
      html: render(`# Title\n\nSee [tools](tools.md) and ${t('text')}.`),
    })
    const docs = (t: Text) => ({ pages: [page(t)], page: () => undefined, llmsTxt: '', llmsFullTxt: '', skillMd: '', agentPrompt: '' })
    await expectInert((t) => frontPageBody(urlOf(t), t('version')))
    await expectInert((t) => docsIndexBody(docs(t)))
    await expectInert((t) => docPageBody(page(t), docs(t)))
    // Markdown whose own links, images and raw HTML are hostile: no markup from it, no javascript: link.
    const hostileMarkdown = render(
      `# ${EVIL}\n\n[click](javascript:alert(1)) [also](${EVIL_URL}) ![img](javascript:alert(2) "${EVIL}")\n\n${SCRIPT}\n\n<img src=x onerror=alert(3)>`,
    )
    expect(dangers(hostileMarkdown)).toEqual([])
    expect(hostileMarkdown).not.toContain(SCRIPT)
    expect(hostileMarkdown).not.toContain('<img src=x')
  })

  test('the HTML export', async () => {
    await expectInert((t) => toHtml(model(t, 'audit')))
    await expectInert((t) => toHtml(model(t, 'scan')))
  })
})
