// Express: a security-headers middleware file beside the app's entry, wired in after express().
import { MARK, type Plan, sh, type Wanted } from '../plan.ts'

const EXPRESS_ENTRIES = [
  'server.js',
  'app.js',
  'index.js',
  'src/server.js',
  'src/app.js',
  'src/index.js',
  'server.ts',
  'app.ts',
  'index.ts',
  'src/server.ts',
  'src/app.ts',
  'src/index.ts',
  'server.mjs',
  'app.mjs',
  'index.mjs',
]

function expressMiddleware(w: Wanted, esm: boolean): string {
  const cookieOpts = [
    w.cookies.has('cookie-secure') ? 'secure: true' : '',
    w.cookies.has('cookie-httponly') ? 'httpOnly: options.httpOnly ?? true' : '',
    w.cookies.has('cookie-samesite') ? "sameSite: options.sameSite ?? 'lax'" : '',
  ].filter(Boolean)
  const body = [
    `// ${MARK}: security headers${w.redirect ? ', http to https' : ''}${cookieOpts.length ? ', cookie attributes' : ''}.`,
    'const HEADERS = [',
    ...w.headers.map((h) => `  [${JSON.stringify(h.key)}, ${JSON.stringify(h.value)}],`),
    ']',
    '',
    `${esm ? 'export default ' : ''}function securityHeaders(req, res, next) {`,
    ...(w.redirect
      ? [
          "  // Behind a proxy, set app.set('trust proxy', 1) so req.secure reads X-Forwarded-Proto.",
          "  if (process.env.NODE_ENV === 'production' && !req.secure && req.get('x-forwarded-proto') !== 'https') {",
          "    return res.redirect(301, 'https://' + req.get('host') + req.originalUrl)",
          '  }',
        ]
      : []),
    '  for (const [key, value] of HEADERS) res.setHeader(key, value)',
    ...(cookieOpts.length
      ? [
          '  const cookie = res.cookie.bind(res)',
          `  res.cookie = (name, value, options = {}) => cookie(name, value, { ...options, ${cookieOpts.join(', ')} })`,
        ]
      : []),
    '  next()',
    '}',
    ...(esm ? [] : ['', 'module.exports = securityHeaders']),
    '',
  ]
  return body.join('\n')
}

export function express(p: Plan, w: Wanted): void {
  const entry = EXPRESS_ENTRIES.find((e) => /\bexpress\s*\(\s*\)/.test(p.current(e) ?? ''))
  const text = entry ? p.current(entry)! : null
  const esm = text ? /^\s*import\s.+from\s+['"]/m.test(text) : false
  const any = w.headers.length || w.redirect || w.cookies.size || w.version
  if (!any) return
  const dir = entry?.includes('/') ? entry.slice(0, entry.lastIndexOf('/') + 1) : ''
  const ext = entry?.endsWith('.ts') ? '.ts' : entry?.endsWith('.mjs') ? '.mjs' : '.js'
  const middleware = `${dir}security-headers${ext}`
  const usesMiddleware = w.headers.length > 0 || !!w.redirect || w.cookies.size > 0
  if (usesMiddleware) p.write(middleware, expressMiddleware(w, esm || ext === '.ts'))
  let wired = false
  if (text) {
    const m = /^([ \t]*)(?:const|let|var)\s+(\w+)(?:\s*:\s*[\w.]+)?\s*=\s*express\s*\(\s*\)\s*;?[ \t]*$/m.exec(text)
    if (m) {
      const app = m[2]!
      const indent = m[1]!
      const after = m.index + m[0].length
      const use: string[] = []
      if (w.version && !text.includes("disable('x-powered-by')")) use.push(`${indent}${app}.disable('x-powered-by')`)
      if (usesMiddleware) use.push(`${indent}${app}.use(securityHeaders)`)
      let next = `${text.slice(0, after)}\n${use.join('\n')}${text.slice(after)}`
      if (usesMiddleware) {
        const spec = `./security-headers${ext === '.ts' ? '' : ext}`
        const importLine = esm || ext === '.ts' ? `import securityHeaders from '${spec}'` : `const securityHeaders = require('${spec}')`
        const lastImport = [
          ...next.matchAll(esm || ext === '.ts' ? /^import\s.*$/gm : /^(?:const|let|var)\s+\w+\s*=\s*require\(.*$/gm),
        ].pop()
        next = lastImport
          ? `${next.slice(0, lastImport.index! + lastImport[0].length)}\n${importLine}${next.slice(lastImport.index! + lastImport[0].length)}`
          : `${importLine}\n${next}`
      }
      p.write(entry!, next)
      wired = true
    }
  }
  const where = wired ? `${middleware}, used by ${entry}` : `${middleware} (add app.use(securityHeaders) before your routes)`
  if (!wired && usesMiddleware)
    p.notes.push(`No express() app was found in the usual entry files: add app.use(require('./${middleware}')) before the routes.`)
  if (w.headers.length) p.fixHeaders(w, where)
  if (w.redirect)
    p.fix(
      w.redirect,
      `${where} redirects http to https in production.`,
      `curl -sI ${sh(p.url.replace(/^https:/, 'http:'))} answers 301 with a location on https.`,
    )
  for (const f of w.cookies.values())
    p.fix(
      f,
      `${where} adds the attribute to cookies set with res.cookie() (not to Set-Cookie written by hand).`,
      `curl -sI ${sh(p.url)} | grep -i '^set-cookie:' shows the attribute.`,
    )
  if (w.version) {
    if (wired)
      p.fix(w.version, `${entry} calls app.disable('x-powered-by').`, `curl -sI ${sh(p.url)} | grep -i '^x-powered-by:' prints nothing.`)
    else p.cannot(w.version, "Add app.disable('x-powered-by') where the express app is created.")
  }
}
