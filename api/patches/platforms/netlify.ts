// Netlify: the headers as a [[headers]] block in netlify.toml, or in the _headers file a site already has.
import { appendBlock, headersFileBlock, MARK, type Plan, type Wanted } from '../plan.ts'

export function netlify(p: Plan, w: Wanted): void {
  if (w.headers.length) {
    const toml = p.current('netlify.toml')
    const existingHeadersFile = ['_headers', 'public/_headers', 'static/_headers'].find((x) => p.current(x) !== null)
    if (toml !== null || !existingHeadersFile) {
      const block = [
        `# ${MARK}: security headers on every path`,
        '[[headers]]',
        '  for = "/*"',
        '  [headers.values]',
        ...w.headers.map((h) => `    ${h.key} = ${JSON.stringify(h.value)}`),
        '',
      ].join('\n')
      p.write('netlify.toml', appendBlock(toml, block))
      p.fixHeaders(w, 'netlify.toml [[headers]], every path')
    } else {
      p.write(existingHeadersFile, appendBlock(p.current(existingHeadersFile), headersFileBlock(w.headers)))
      p.fixHeaders(w, `${existingHeadersFile}, every path`)
    }
  }
  if (w.redirect)
    p.cannot(w.redirect, 'Netlify redirects http to https itself once the domain has a certificate (Domain settings > HTTPS).')
  if (w.version) p.cannot(w.version, "Netlify's own Server header cannot be removed from configuration.")
  p.cookiesInCode(w, 'Cookies on Netlify are set by the functions or the application code: add the attribute where they are set.')
}
