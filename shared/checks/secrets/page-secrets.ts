// Secrets in the page's own HTML as the server sent it: provider keys, private keys, connection strings and
// URLs with passwords anywhere in the markup, and passwords or keys written into HTML comments. Scripts are
// left to js-secrets, which reads them as the browser ran them.

import { defineCheck } from '../types.ts'
import { clip } from '../util/http.ts'
import { redact } from '../util/redact.ts'
import { looksRandom, scanScripts, secretsOutcome, type SecretFinding } from '../util/secrets.ts'
import { bySeverity } from '../../report/ranking.ts'

const MAX_FINDINGS = 20
const MAX_COMMENTS = 500
const SCRIPT = /(<script\b[^>]{0,2000}>)([\s\S]*?)(<\/script\s*>)/gi
/** Characters of one comment read at most. */
const MAX_COMMENT = 20_000
/** `password: x`, `api_key = "x"`, `token is x` inside a comment. */
const COMMENT_CREDENTIAL =
  /(?<![A-Za-z0-9_])(pass(?:word|wd)?|pwd|secret(?:[ _-]?key)?|api[ _-]?key|access[ _-]?key|auth[ _-]?token|token|credentials?)["']?\s*(?::|=|=>|\bis\b)\s*["']?([^\s"'<>,;]{6,120})/gi
const PLACEHOLDER =
  /^(?:pass(?:word|wd)?\d{0,3}|secret|changeme|change[-_]?me|x{3,}|\*{3,}|\.{3,}|null|none|undefined|required|optional|todo|tbd|example\S*|your\S*|\$\{.*|\{\{.*|<.*|%.*)$/i

/** The HTML with every script's text blanked (same length, so offsets and lines hold). */
export function withoutScripts(html: string): string {
  return html.replace(SCRIPT, (_, open: string, body: string, close: string) => open + body.replace(/[^\n]/g, ' ') + close)
}

function lineOf(text: string, offset: number): number {
  let line = 1
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) line++
  return line
}

/** Credentials written into HTML comments: a credential word, then a value that is not a placeholder. */
export function commentCredentials(html: string, url: string): SecretFinding[] {
  const found: SecretFinding[] = []
  const seen = new Set<string>()
  let pos = 0
  for (let comments = 0; comments < MAX_COMMENTS; comments++) {
    const start = html.indexOf('<!--', pos)
    if (start === -1) break
    const end = html.indexOf('-->', start + 4)
    if (end === -1) break
    pos = end + 3
    const comment = html.slice(start + 4, Math.min(end, start + 4 + MAX_COMMENT))
    for (const m of comment.matchAll(COMMENT_CREDENTIAL)) {
      const value = m[2]!.replace(/[.)]+$/, '')
      // A value of letters only is a word ("password: required", "token is invalid"), not a credential.
      if (PLACEHOLDER.test(value) || /^[A-Za-z]+$/.test(value) || !(looksRandom(value, 6) || /\d/.test(value)) || seen.has(value)) continue
      seen.add(value)
      const offset = start + 4 + (m.index ?? 0)
      found.push({
        kind: 'credential-in-html-comment',
        exposure: 'secret',
        severity: 'high',
        scriptUrl: url,
        redacted: `${clip(m[1]!, 30)}: ${redact(value)}`,
        offset,
        line: lineOf(html, offset),
        column: 0,
        occurrences: 1,
        note: 'written into an HTML comment, which every visitor receives',
      })
    }
  }
  return found
}

export const pageSecrets = defineCheck({
  id: 'page-secrets',
  category: 'secrets',
  title: 'No secrets in the page\u2019s HTML',
  failTitle: 'Secrets in the page\u2019s HTML',
  description:
    'Reads the HTML the server sent (outside its scripts, which js-secrets reads) for provider keys, private keys, connection ' +
    'strings and URLs with a password, and for passwords, tokens and keys written into HTML comments.',
  why:
    'Every visitor receives the whole HTML, comments and hidden attributes included: a staging database URL in a comment or a key in ' +
    'a data attribute is as public as the page text.',
  confirmation:
    'Uses the same rules as js-secrets (Stripe, AWS, GitHub, Slack, OpenAI, Anthropic and Supabase formats; PEM private key blocks; ' +
    'scheme://user:password@host URLs for databases, HTTP and FTP), and in HTML comments a credential word (password, pwd, secret, ' +
    'api key, token, credentials) followed by a value of 6 or more characters with a digit or mixed case. Not findings: ' +
    'placeholders (password, changeme, xxx, ${VAR}, {{var}}, <password>), example hosts (example.com), documentation example keys ' +
    '(info), public-by-design keys (info), a word after "password:" ("password: required"). Evidence: kind, line and a redacted ' +
    'value (first 8 and last 4 characters).',
  severity: 'high',
  fix: {
    generic:
      'Revoke and rotate what was exposed, then remove it from the templates: credentials belong in server-side environment ' +
      'variables, and comments meant for developers should not reach production HTML (strip them in the build or template engine).',
    vercel:
      'Rotate the secret, move it to a server-only Environment Variable and remove it from the page templates; HTML comments in JSX ' +
      'are not rendered, but those in .html files and server templates are.',
    netlify:
      'Rotate the secret, keep it in Site configuration > Environment variables for Functions only, remove it from the published ' +
      'HTML and enable HTML minification (it strips comments) in the build.',
    nextjs:
      'Rotate the secret; never pass it to a client component or into the HTML (no NEXT_PUBLIC_ prefix); read it in server code only.',
    nginx:
      'Rotate the secret and remove it from the HTML files under the server root; nginx serves them as written (sub_filter is not a ' +
      'fix: the file is still readable elsewhere).',
    cloudflare:
      'Rotate the secret, remove it at the origin, then purge the cached pages (Caching > Configuration > Purge Cache); HTML ' +
      'minification does not remove secrets from attributes.',
  },
  fixTarget: { kind: 'secrets' },
  requires: ['mainResponse'],
  run: ({ mainResponse }) => {
    const html = withoutScripts(mainResponse.body)
    const findings = [...scanScripts([{ url: mainResponse.url, inline: true, body: html }]), ...commentCredentials(html, mainResponse.url)]
    findings.sort(bySeverity)
    const evidence = {
      url: mainResponse.url,
      bytes: mainResponse.body.length,
      total: findings.length,
      findings: findings.slice(0, MAX_FINDINGS).map((f) => ({
        kind: f.kind,
        severity: f.severity,
        public: f.exposure === 'public',
        value: f.redacted,
        line: f.line,
        occurrences: f.occurrences,
        ...(f.note ? { note: f.note } : {}),
      })),
      truncated: findings.length > MAX_FINDINGS,
    }
    return secretsOutcome(
      findings,
      evidence,
      "in the page's HTML",
      (f) => `on line ${f.line}`,
      `No secrets in the ${mainResponse.body.length} bytes of HTML outside scripts.`,
    )
  },
})
