// nginx: add_header, server_tokens, proxy_cookie_flags and the port-80 redirect in each server block of the
// repository's .conf files, or a snippet to include when it has none.
import { findPaths, MARK, type Plan, sh, type Wanted } from '../plan.ts'

/** Positions just after each `server {` line, with the block's text up to its closing brace (brace-counted). */
function serverBlocks(text: string): Array<{ insertAt: number; indent: string; body: string }> {
  const out: Array<{ insertAt: number; indent: string; body: string }> = []
  const re = /^([ \t]*)server\s*\{[ \t]*(?:#.*)?$/gm
  for (let m = re.exec(text); m && out.length < 50; m = re.exec(text)) {
    const open = text.indexOf('{', m.index)
    let depth = 0
    let end = text.length
    for (let i = open; i < text.length; i++) {
      if (text[i] === '{') depth++
      else if (text[i] === '}' && --depth === 0) {
        end = i
        break
      }
    }
    out.push({ insertAt: m.index + m[0].length, indent: `${m[1]}    `, body: text.slice(open + 1, end) })
  }
  return out
}

const headerLines = (w: Wanted, indent: string) => w.headers.map((h) => `${indent}add_header ${h.key} "${h.value}" always;`)
const LISTENS_TLS = /\blisten\s+[^;]*\b(?:443|ssl)\b/

export function nginx(p: Plan, w: Wanted): void {
  const files = findPaths(p.repo, /(?:^|\/)(?:nginx\.conf|[\w.-]+\.conf)$/).filter((f) => serverBlocks(p.current(f) ?? '').length > 0)
  if (files.length === 0) {
    snippet(p, w)
    return
  }
  const cookieFlags = [
    w.cookies.has('cookie-secure') ? 'secure' : '',
    w.cookies.has('cookie-httponly') ? 'httponly' : '',
    w.cookies.has('cookie-samesite') ? 'samesite=lax' : '',
  ].filter(Boolean)
  let redirected = false
  let cookied = false
  for (const file of files) {
    const edited = editServerBlocks(p.current(file)!, w, cookieFlags)
    redirected ||= edited.redirected
    cookied ||= edited.cookied
    p.write(file, edited.text)
  }
  report(p, w, files.join(', '), { redirected, cookied, cookieFlags })
}

/** No server block to edit: a snippet to include, named in the manual steps. */
function snippet(p: Plan, w: Wanted): void {
  const lines = [`# ${MARK}. Include it in each server block: include snippets/security-headers.conf;`]
  if (w.headers.length) lines.push(...headerLines(w, ''))
  if (w.version) lines.push('server_tokens off;')
  if (lines.length > 1) {
    p.write('nginx/snippets/security-headers.conf', `${lines.join('\n')}\n`)
    p.notes.push('No nginx server block was found in the repository: include nginx/snippets/security-headers.conf in each server block.')
    p.fixHeaders(w, 'nginx/snippets/security-headers.conf, once included in the server block')
    if (w.version)
      p.fix(w.version, 'server_tokens off hides the nginx version.', `curl -sI ${sh(p.url)} | grep -i '^server:' shows no version number.`)
  }
  if (w.redirect) p.cannot(w.redirect, 'No nginx server block was found to add the redirect to.')
  p.cookiesInCode(w, 'No nginx server block was found; proxy_cookie_flags needs one that proxies to the app.')
}

/** One file's server blocks with the wanted lines added: the redirect in a port-80 block beside a TLS one, else
 * the headers, server_tokens and (where it proxies) proxy_cookie_flags. */
function editServerBlocks(text: string, w: Wanted, cookieFlags: string[]): { text: string; redirected: boolean; cookied: boolean } {
  let redirected = false
  let cookied = false
  const blocks = serverBlocks(text)
  const hasTls = blocks.some((b) => LISTENS_TLS.test(b.body))
  // From the last block backwards so earlier offsets stay valid.
  for (const b of [...blocks].reverse()) {
    const plainOnly = /\blisten\s+[^;]*\b80\b/.test(b.body) && !LISTENS_TLS.test(b.body)
    const lines: string[] = []
    if (w.redirect && hasTls && plainOnly && !/\breturn\s+30[18]\s+https:/.test(b.body)) {
      lines.push(`${b.indent}# ${MARK}: http to https`, `${b.indent}return 301 https://$host$request_uri;`)
      redirected = true
    } else {
      if (w.headers.length) lines.push(`${b.indent}# ${MARK}: security headers`, ...headerLines(w, b.indent))
      if (w.version && !/\bserver_tokens\s+off\b/.test(b.body)) lines.push(`${b.indent}server_tokens off;`)
      if (cookieFlags.length && /\bproxy_pass\b/.test(b.body)) {
        lines.push(`${b.indent}proxy_cookie_flags ~ ${cookieFlags.join(' ')};`)
        cookied = true
      }
    }
    if (lines.length) text = `${text.slice(0, b.insertAt)}\n${lines.join('\n')}${text.slice(b.insertAt)}`
  }
  return { text, redirected, cookied }
}

/** What the edits of `where` fix, and what they could not. */
function report(p: Plan, w: Wanted, where: string, done: { redirected: boolean; cookied: boolean; cookieFlags: string[] }): void {
  if (w.headers.length) {
    p.fixHeaders(w, `add_header ... always in each server block of ${where}`)
    p.notes.push('nginx drops inherited add_header lines in a location that has add_header of its own: repeat them there if so.')
  }
  if (w.version) p.fix(w.version, `server_tokens off in ${where}.`, `curl -sI ${sh(p.url)} | grep -i '^server:' shows no version number.`)
  if (w.redirect) {
    if (done.redirected)
      p.fix(
        w.redirect,
        `The port-80 server block of ${where} answers 301 to https.`,
        `curl -sI ${sh(p.url.replace(/^https:/, 'http:'))} answers 301 with a location on https.`,
      )
    else
      p.cannot(
        w.redirect,
        'No TLS server block (listen 443 ssl) was found next to the port-80 one: set up certificates first (e.g. certbot), then redirect.',
      )
  }
  for (const f of w.cookies.values()) {
    if (done.cookied)
      p.fix(
        f,
        `proxy_cookie_flags adds ${done.cookieFlags.join(', ')} to the app's cookies (nginx 1.19.3 or later).`,
        `curl -sI ${sh(p.url)} | grep -i '^set-cookie:' shows the attribute.`,
      )
    else p.cannot(f, 'No server block proxies to the app (proxy_pass): the cookies are set by the app itself; add the attribute there.')
  }
}
