// Next.js: an async headers() and poweredByHeader: false in the config object of next.config.*.
import { type Header, MARK, type Plan, sh, type Wanted } from '../plan.ts'

export const NEXT_CONFIGS = ['next.config.js', 'next.config.mjs', 'next.config.ts', 'next.config.cjs']

function nextHeadersSnippet(headers: Header[], indent: string): string {
  return [
    `${indent}// ${MARK}: security headers on every path`,
    `${indent}async headers() {`,
    `${indent}  return [`,
    `${indent}    {`,
    `${indent}      source: '/:path*',`,
    `${indent}      headers: [`,
    ...headers.map((h) => `${indent}        { key: ${JSON.stringify(h.key)}, value: ${JSON.stringify(h.value)} },`),
    `${indent}      ],`,
    `${indent}    },`,
    `${indent}  ]`,
    `${indent}},`,
  ].join('\n')
}

export function nextjs(p: Plan, w: Wanted): void {
  const poweredBy = w.version && JSON.stringify(w.version.evidence).toLowerCase().includes('next.js')
  const path = NEXT_CONFIGS.find((x) => p.current(x) !== null)
  const before = path ? p.current(path)! : null
  const inserts: string[] = []
  if (w.headers.length) inserts.push(nextHeadersSnippet(w.headers, '  '))
  if (poweredBy && !(before ?? '').includes('poweredByHeader')) inserts.push('  poweredByHeader: false,')
  if (inserts.length) {
    if (before === null) {
      p.write('next.config.js', `/** @type {import('next').NextConfig} */\nmodule.exports = {\n${inserts.join('\n')}\n}\n`)
      applied('next.config.js')
    } else if (w.headers.length && /\bheaders\s*\(/.test(before)) {
      for (const { f } of w.headerFixes)
        p.cannot(f, `${path} already defines headers(): add ${f.checkId === 'csp' ? 'the policy' : 'the header'} to its list by hand.`)
      if (poweredBy && w.version) p.cannot(w.version, `Add poweredByHeader: false to ${path}.`)
    } else {
      const m =
        /(?:^|\n)\s*(?:const|let|var)\s+\w+\s*(?::\s*[\w.]+\s*)?=\s*\{/.exec(before) ??
        /module\.exports\s*=\s*\{/.exec(before) ??
        /export\s+default\s+\{/.exec(before) ??
        /(?:module\.exports\s*=|export\s+default)\s*\w+\(\s*\{/.exec(before)
      if (!m) {
        for (const { f } of w.headerFixes)
          p.cannot(f, `${path} has a shape the patch does not recognise: add an async headers() to its config object.`)
        if (poweredBy && w.version) p.cannot(w.version, `Add poweredByHeader: false to ${path}.`)
      } else {
        const at = m.index + m[0].length
        p.write(path!, `${before.slice(0, at)}\n${inserts.join('\n')}${before.slice(at)}`)
        applied(path!)
      }
    }
  }
  function applied(file: string) {
    if (w.headers.length) p.fixHeaders(w, `${file} headers(), every path`)
    if (poweredBy && w.version)
      p.fix(
        w.version,
        `poweredByHeader: false in ${file} drops X-Powered-By: Next.js.`,
        `curl -sI ${sh(p.url)} | grep -i '^x-powered-by:' prints nothing.`,
      )
  }
  if (w.version && !poweredBy)
    p.cannot(w.version, 'The version comes from the server in front of Next.js (its Server header): turn it off there.')
  if (w.redirect) p.cannot(w.redirect, 'Next.js does not terminate TLS: redirect http to https on the host or proxy in front of it.')
  p.cookiesInCode(w, 'Next.js sets cookies in code (cookies().set, res.setHeader): pass the attribute there.')
}
