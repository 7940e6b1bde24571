// The public documents, the /docs pages and the front page. Rules enforced:
//   - no authentication anywhere here;
//   - the text documents (/llms.txt, /llms-full.txt, /api/skills.md, /agent-prompt, /docs/{page}.md) send
//     access-control-allow-origin: * so they can be fetched cross-origin, and a public cache of an hour
//     (what skills.md promises; the others change only with a deployment too);
//   - the HTML pages carry the headers of every server-rendered page (api/http/layout.ts): no CORS, never
//     framed, never cached, styles by nonce and no script;
//   - `/` answers a browser (Accept names text/html) with a page and anything else with plain text.
// Everything is built once, here, at start (service.ts); a request only picks a prebuilt string.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import Elysia from 'elysia'
import { withCors } from '../http/cors.ts'
import { type Html, html } from '../../shared/lib/html.ts'
import { layout, newNonce, pageHeaders } from '../http/layout.ts'
import { DOC_STYLE, docPageBody, docsIndexBody, frontPageBody, frontPageText, NAV } from './pages.ts'
import { buildPublicDocuments, type DocSource, slugOf } from './service.ts'

export const DOCS_DIR = fileURLToPath(new URL('../../docs/', import.meta.url))

export interface PublicDeps {
  baseUrl: string
  version: string
  /** Where the markdown pages are; docs/ of this checkout by default. */
  docsDir?: string
}

/** Every markdown page of a docs directory. */
export function readDocSources(dir: string): DocSource[] {
  return readdirSync(dir)
    .filter((file) => slugOf(file) !== null)
    .map((file) => ({ file, text: readFileSync(join(dir, file), 'utf8') }))
}

const DOCUMENT_CACHE = 'public, max-age=3600'

function textDocument(body: string, contentType: string): Response {
  return withCors(
    new Response(body, {
      headers: { 'content-type': `${contentType}; charset=utf-8`, 'cache-control': DOCUMENT_CACHE, 'x-content-type-options': 'nosniff' },
    }),
  )
}

function htmlPage(title: string, body: Html, extra: Record<string, string> = {}): Response {
  const nonce = newNonce()
  const page = layout({ title, nonce, nav: NAV, body: html`<style nonce="${nonce}">${DOC_STYLE}</style>${body}` })
  return new Response(page, { headers: pageHeaders(nonce, extra) })
}

const notFound = () =>
  new Response('Not found\n', { status: 404, headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' } })

// A browser asks for HTML by name; curl sends "*/*", and scripts send nothing or the type they parse.
const wantsHtml = (request: Request) => (request.headers.get('accept') ?? '').toLowerCase().includes('text/html')

export function publicRoutes(deps: PublicDeps) {
  const { baseUrl, version } = deps
  const docs = buildPublicDocuments({ baseUrl, version, sources: readDocSources(deps.docsDir ?? DOCS_DIR) })
  const front = { html: frontPageBody(baseUrl, version), text: frontPageText(baseUrl, version) }
  const index = docsIndexBody(docs)
  const pageBodies = new Map(docs.pages.map((p) => [p.slug, docPageBody(p, docs)]))

  return new Elysia({ name: 'public-docs' })
    .get('/', ({ request }) => {
      // One URL, two representations: caches must key on Accept.
      if (wantsHtml(request)) return htmlPage('An audit service for web apps', front.html, { vary: 'accept' })
      return new Response(front.text, {
        headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', vary: 'accept' },
      })
    })
    .get('/llms.txt', () => textDocument(docs.llmsTxt, 'text/plain'))
    .get('/llms-full.txt', () => textDocument(docs.llmsFullTxt, 'text/plain'))
    .get('/api/skills.md', () => textDocument(docs.skillMd, 'text/markdown'))
    .get('/agent-prompt', () => textDocument(docs.agentPrompt, 'text/plain'))
    .get('/docs', () => htmlPage('Documentation', index))
    .get('/docs/:page', ({ params }) => {
      // /docs/tools is the page for people; /docs/tools.md its markdown (the llms.txt convention).
      const asMarkdown = params.page.endsWith('.md')
      const page = docs.page(asMarkdown ? params.page.slice(0, -'.md'.length) : params.page)
      if (!page) return notFound()
      if (asMarkdown) return textDocument(page.markdown, 'text/markdown')
      return htmlPage(page.title, pageBodies.get(page.slug)!)
    })
}
