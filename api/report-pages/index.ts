// Report pages: the owner's (/dashboard/scans/{id}, /dashboard/audits/{id}) and the public one of a shared
// report (/r/{slug}, with its badge at /r/{slug}/badge). Rules enforced:
//   - the owner's pages and actions take the session cookie only (guards.ts): a bearer token is 401, another
//     account's id is 404 like a missing one, every action passes the Origin and anti-CSRF checks;
//   - a report is public only while its owner shares it; a withdrawn or unknown slug, or anything that is
//     not a slug at all, is 404 (the badge too), and no slug is ever derived from an id;
//   - public pages ask not to be indexed (X-Robots-Tag and meta robots) and send no referrer;
//   - pages are never framed, never cached, scripts and styles by nonce only (pageHeaders); the badge is
//     cached briefly with an ETag.
import Elysia from 'elysia'
import { findShare, isSlug, sharedScore, shareReport, type ShareKind, withdrawShare } from '../../shared/db/shares.ts'
import { viewerLinkTtlS } from '../../shared/jobs/recovery.ts'
import { createViewerToken, viewerLink } from '../../shared/protocol/viewer.ts'
import { html } from '../../shared/lib/html.ts'
import type { SignInSession } from '../../shared/db/users.ts'
import { type DashboardGuards, dashboardGuards, sessionLabel } from '../dashboard/guards.ts'
import { dashboardPage } from '../dashboard/pages.ts'
import { htmlPage, layout, newNonce, pageHeaders } from '../http/layout.ts'
import type { Services } from '../services.ts'
import { BADGE_MAX_AGE_S, badgeEtag, badgeSvg, matchesEtag } from './badge.ts'
import { isIdOf, listPages } from './model.ts'
import { badgeSection, REPORT_SCRIPT, REPORT_STYLE, reportBody } from './pages.ts'
import { frameResponse, replayHtml } from './replay.ts'
import { ReportPages } from './service.ts'

const NOTICES: Record<string, string> = {
  shared: 'This report is now public: anyone with the link below can open it.',
  withdrawn: 'The public link is withdrawn: it and its badge now answer 404.',
}

const NOINDEX = 'noindex, nofollow, noarchive'

const notFoundPage = () => htmlPage(404, 'Not found', html`<h1>Not found</h1><p>No such report in this account.</p>`)

function publicNotFound(): Response {
  return new Response('Not found\n', {
    status: 404,
    headers: {
      'content-type': 'text/plain; charset=utf-8',
      'cache-control': 'no-store',
      'x-robots-tag': NOINDEX,
      'x-content-type-options': 'nosniff',
    },
  })
}

const seeOther = (location: string) => new Response(null, { status: 303, headers: { location, 'cache-control': 'no-store' } })

export function reportPageRoutes(services: Services) {
  const guards = dashboardGuards(services.db.sql, services.config.baseUrl)
  const pages = new ReportPages(services.db.sql)
  return new Elysia({ name: 'report-pages' }).use(ownerRoutes(services, guards, pages)).use(publicReportRoutes(services, pages))
}

/** The owner's report pages, their actions (share, withdraw, a new viewer link) and the replay's frames. */
function ownerRoutes(services: Services, guards: DashboardGuards, pages: ReportPages) {
  const page = ownerPage(services, pages)
  const action = ownerAction(services, pages)
  return (
    new Elysia({ name: 'report-pages-owner' })
      .use(guards)
      .get('/dashboard/scans/:id', ({ request, params, session }) => page(request, session, 'scan', params.id), { session: 'page' })
      .get('/dashboard/audits/:id', ({ request, params, session }) => page(request, session, 'audit', params.id), { session: 'page' })
      .post('/dashboard/scans/:id/:verb', ({ params, session }) => action(session, 'scan', params.id, params.verb), { form: true })
      .post('/dashboard/audits/:id/:verb', ({ params, session }) => action(session, 'audit', params.id, params.verb), { form: true })
      // The replay's frames: the owner's, by session; a shared audit's, by its public link until it is withdrawn.
      .get(
        '/dashboard/audits/:id/replay/:seq',
        ({ params, session }) =>
          isIdOf('audit', params.id) ? frameResponse(services.db.sql, params.id, params.seq, session.user.accountId) : notFoundPage(),
        { session: 'page' },
      )
  )
}

/** The owner's report page: the report, its share controls and, for an ended audit, its replay. */
function ownerPage({ db, config, log }: Services, pages: ReportPages) {
  return async (request: Request, s: SignInSession, kind: ShareKind, id: string): Promise<Response> => {
    if (!isIdOf(kind, id)) return notFoundPage()
    const d = await pages.load(s.user.accountId, kind, id)
    if (!d) return notFoundPage()
    const url = new URL(request.url)
    const nonce = newNonce()
    const ended = d.status !== 'queued' && d.status !== 'running'
    const base = `/dashboard/${kind}s/${id}`
    const replay = kind === 'audit' && ended ? await replayHtml(db.sql, log, id, `${base}/replay`, nonce) : null
    const notice = NOTICES[url.searchParams.get('notice') ?? '']
    const body = reportBody(d, {
      at: listPages(url),
      linkBase: base,
      replay,
      owner: {
        csrf: s.csrfToken,
        actionBase: base,
        publicUrl: d.slug ? `${config.baseUrl}/r/${d.slug}` : null,
        ...(notice ? { notice: { text: notice } } : {}),
      },
    })
    return dashboardPage(`${kind === 'scan' ? 'Scan' : 'Audit'} report`, body, s.csrfToken, sessionLabel(s), {
      script: REPORT_SCRIPT,
      style: REPORT_STYLE,
      nonce,
    })
  }
}

/** An owner's action on a report: share it, withdraw its public link, or open a new live viewer link. */
function ownerAction({ db, config, infra, log }: Services, pages: ReportPages) {
  return async (session: SignInSession, kind: ShareKind, id: string, verb: string): Promise<Response> => {
    const accountId = session.user.accountId
    if (!isIdOf(kind, id)) return notFoundPage()
    const base = `/dashboard/${kind}s/${id}`
    const d = await pages.load(accountId, kind, id)
    if (!d) return notFoundPage()
    if (verb === 'share') {
      if (d.status !== 'completed') {
        return htmlPage(
          409,
          'Not finished',
          html`<h1>Not finished</h1><p>Only a completed report can be shared. <a href="${base}">Back to the report</a></p>`,
        )
      }
      const share = await shareReport(db.sql, accountId, kind, id)
      if (!share) return notFoundPage()
      log.info('report shared', { accountId, kind, id })
      return seeOther(`${base}?notice=shared`)
    }
    if (verb === 'unshare') {
      if (await withdrawShare(db.sql, accountId, kind, id)) log.info('report share withdrawn', { accountId, kind, id })
      return seeOther(`${base}?notice=withdrawn`)
    }
    if (verb === 'viewer' && kind === 'audit') {
      // A new link for the owner: the one audit_app returned may be lost; it dies with the crawl all the same.
      if (d.status !== 'queued' && d.status !== 'running') {
        return htmlPage(
          409,
          'Crawl ended',
          html`<h1>The crawl has ended</h1><p>The live viewer works only while it runs. <a href="${base}">See the report</a></p>`,
        )
      }
      const token = await createViewerToken(infra.kv, id, viewerLinkTtlS(config, config.AUDIT_MAX_DURATION_S))
      return seeOther(viewerLink(config.baseUrl, id, token))
    }
    return notFoundPage()
  }
}

/** A shared report's public page, its replay's frames and its badge: anyone with the link, until it is withdrawn. */
function publicReportRoutes({ db, config, log }: Services, pages: ReportPages) {
  return new Elysia({ name: 'report-pages-public' })
    .get('/r/:slug', async ({ request, params }) => {
      if (!isSlug(params.slug)) return publicNotFound()
      const d = await pages.loadPublic(params.slug)
      if (!d) return publicNotFound()
      const nonce = newNonce()
      const ended = d.status !== 'queued' && d.status !== 'running'
      const replay = d.kind === 'audit' && ended ? await replayHtml(db.sql, log, d.id, `/r/${params.slug}/replay`, nonce) : null
      const publicUrl = `${config.baseUrl}/r/${params.slug}`
      const body = reportBody(d, {
        at: listPages(new URL(request.url)),
        linkBase: `/r/${params.slug}`,
        replay,
        afterScore: badgeSection(publicUrl, d.model),
      })
      const page = layout({
        title: `${d.kind === 'scan' ? 'Scan' : 'Audit'} of ${d.url}`,
        nonce,
        body: html`<style nonce="${nonce}">${REPORT_STYLE}</style>${body}<p class="muted">A report shared by its owner through App Audit.</p>`,
      }).replace('<head>', `<head><meta name="robots" content="${NOINDEX}"><meta name="referrer" content="no-referrer">`)
      return new Response(page, { headers: pageHeaders(nonce, { 'x-robots-tag': NOINDEX, 'referrer-policy': 'no-referrer' }) })
    })
    .get('/r/:slug/replay/:seq', async ({ params }) => {
      if (!isSlug(params.slug)) return publicNotFound()
      const share = await findShare(db.sql, params.slug)
      if (!share || share.kind !== 'audit') return publicNotFound()
      return frameResponse(db.sql, share.targetId, params.seq)
    })
    .get('/r/:slug/badge', async ({ request, params }) => {
      if (!isSlug(params.slug)) return publicNotFound()
      const shared = await sharedScore(db.sql, params.slug)
      return shared ? badgeResponse(shared, request.headers.get('if-none-match')) : publicNotFound()
    })
}

/** A shared report's badge: cached briefly with an ETag, and loadable from any site (a README's <img>). */
function badgeResponse(shared: { score: number | null; grade: string | null }, ifNoneMatch: string | null): Response {
  const svg = badgeSvg(shared.score, shared.grade)
  const etag = badgeEtag(svg)
  const headers = {
    'cache-control': `public, max-age=${BADGE_MAX_AGE_S}`,
    etag,
    'x-robots-tag': NOINDEX,
    'x-content-type-options': 'nosniff',
    'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'",
    // Embedded by READMEs on other sites (an <img>), so other origins may load it.
    'cross-origin-resource-policy': 'cross-origin',
  }
  if (matchesEtag(ifNoneMatch, etag)) return new Response(null, { status: 304, headers })
  return new Response(svg, { headers: { ...headers, 'content-type': 'image/svg+xml; charset=utf-8' } })
}
