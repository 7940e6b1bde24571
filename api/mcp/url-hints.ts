// Target URLs a scan could never take, caught at the tool boundary with the URL to send instead, as a URL
// without its scheme is (tools/schemas.ts): another scheme (ftp://example.com), or a scheme with no host
// (http://). Nothing is scanned on a guess: the caller gets the suggestion back and sends it.

import { targetUrls } from './tools/schemas.ts'

const LOCAL = /^(?:localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i
const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//

export interface UnusableUrl {
  /** JSON Pointer of the argument, e.g. /url or /urls/2. */
  path: string
  value: string
  /** What is wrong and what to send, ending "Nothing was started." */
  message: string
  /** The URL to send instead, when one can be named. */
  suggestion: string | null
}

/** Why `raw` cannot be scanned and what to send instead; null when it has http(s) and a host, or no scheme at all. */
export function urlHint(raw: string): Omit<UnusableUrl, 'path' | 'value'> | null {
  const s = raw.trim()
  const scheme = SCHEME.exec(s)?.[1]?.toLowerCase()
  if (!scheme) return null
  const rest = s.slice(s.indexOf('//') + 2)
  const shown = JSON.stringify(s.slice(0, 200))
  const example = 'e.g. http://localhost:3000/ or https://www.example.com/'
  if (rest.replace(/^\/+/, '') === '') {
    return { message: `${shown} has no host: send the app's whole address, ${example}. Nothing was started.`, suggestion: null }
  }
  if (scheme === 'http' || scheme === 'https') return null
  let url: URL
  try {
    url = new URL(`https://${rest}`)
  } catch {
    return { message: `${shown} is not a web address: send an http:// or https:// URL, ${example}. Nothing was started.`, suggestion: null }
  }
  if (url.username !== '' || url.password !== '') url = new URL(`https://${url.host}${url.pathname}${url.search}`)
  // ws:// is http's twin, as is a loopback host (local development servers rarely speak TLS).
  const plain = scheme === 'ws' || LOCAL.test(url.hostname)
  const suggestion = plain ? url.href.replace(/^https:/, 'http:') : url.href
  const other = plain ? suggestion.replace(/^http:/, 'https:') : suggestion.replace(/^https:/, 'http:')
  return {
    message:
      `${shown} uses ${scheme}://; the scanner reads web apps over http:// and https://. Send ${suggestion} ` +
      `(or ${other}). Nothing was started.`,
    suggestion,
  }
}

/** The first target-URL argument with another scheme than http(s), or without a host; null when there is none. */
export function findUnusableUrl(args: unknown): UnusableUrl | null {
  for (const { value, path, entry } of targetUrls(args)) {
    const hint = urlHint(value)
    // In a list, the message names the entry, as start_directory_run's own refusals do: urls[1].
    if (hint) return { path, value, ...hint, message: (entry ? `${entry}: ` : '') + hint.message }
  }
  return null
}
