// Cloudflare Pages: the headers in a _headers file beside the site's static files.
import { appendBlock, headersFileBlock, pick, type Plan, type Wanted } from '../plan.ts'

export function cloudflare(p: Plan, w: Wanted): void {
  if (w.headers.length) {
    const path = pick(
      p.repo,
      ['public/_headers', 'static/_headers', 'dist/_headers', '_headers']
        .filter((x) => p.repo.read(x) !== null)
        .concat(p.repo.paths.some((x) => x.startsWith('public/')) ? ['public/_headers'] : ['_headers']),
    )
    p.write(path, appendBlock(p.current(path), headersFileBlock(w.headers)))
    p.fixHeaders(w, `${path} (Cloudflare Pages), every path`)
  }
  if (w.redirect) p.cannot(w.redirect, 'A dashboard setting: SSL/TLS > Edge Certificates > Always Use HTTPS.')
  if (w.version)
    p.cannot(w.version, 'Set by the origin behind Cloudflare, or by Cloudflare itself: remove it at the origin, or with a Transform Rule.')
  p.cookiesInCode(w, 'Cookies are set by the application (or a Worker): add the attribute where they are set.')
}
