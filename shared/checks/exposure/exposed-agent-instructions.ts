// Instruction files for coding agents (CLAUDE.md, AGENTS.md, .cursorrules, ...) deployed with the site.

import { AGENT_INSTRUCTION_PROBES } from '../probe-paths.ts'
import { defineCheck, type Severity } from '../types.ts'
import { clip } from '../util/http.ts'
import { confirmByContent, confirmedOnly, listPaths, notServedOutcome, probeEvidence } from '../util/probe.ts'
import { redactUrlCredentials } from '../util/redact.ts'
import { scanScripts } from '../util/secrets.ts'

/** Text read per file for judging its shape; the secret scan reads the whole (capped) body. */
const HEAD = 8_192
const MAX_SECRETS = 10

/** Short bodies that are a server's "not here" message rather than a file. */
const ERROR_TEXT =
  /\b(?:not found|cannot get|no such file|file not found|page not found|forbidden|access denied|unauthori[sz]ed|bad request|does not exist|no route)\b|\b40[0134]\b/i
const HEADING = /^ {0,3}#{1,6}\s+\S/m
const LIST_ITEM = /^ {0,6}(?:[-*+]|\d{1,3}[.)])\s+\S/m
const WORD = /[A-Za-z][A-Za-z'’-]{1,30}/g
/** A credential inside a URL (scheme://user:password@host). */
const URL_CREDENTIALS = /\b[a-z][a-z0-9+.-]{1,20}:\/\/[^\s:@/'"<>]{1,100}:[^\s@/'"<>]{1,200}@[^\s'"<>]{1,200}/gi

export interface InstructionsShape {
  firstLine: string
  /** Characters in the (possibly cut) body. */
  size: number
}

/**
 * Markdown or prose: printable text, not JSON, not a short error message, with at least eight words and
 * either Markdown structure (a heading or list item) or two lines of prose. Instruction vocabulary is not
 * required: many CLAUDE.md and AGENTS.md files read like a README (overview, commands, layout), and what
 * makes them a finding is the file deployed at that path.
 */
export function readInstructions(body: string): InstructionsShape | null {
  const head = body.slice(0, HEAD).replace(/^\uFEFF/, '')
  const text = head.trim()
  if (text.length < 30) return null
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this line looks for (binary, not text)
  if (/[\u0000-\u0008\u000E-\u001F]/.test(text)) return null
  if (text.startsWith('{') || text.startsWith('[')) {
    try {
      JSON.parse(body)
      return null
    } catch {
      // Markdown may start with a [link]; an unparsable body is judged as text below.
    }
  }
  if (text.length < 300 && ERROR_TEXT.test(text)) return null
  const words = text.match(WORD)?.length ?? 0
  if (words < 8) return null
  const proseLines = text.split('\n', 400).filter((l) => (l.match(WORD)?.length ?? 0) >= 4).length
  if (!HEADING.test(text) && !LIST_ITEM.test(text) && proseLines < 2) return null
  const heading = /^ {0,3}#{1,6}\s+(\S[^\n]*)$/m.exec(text)
  const first = heading ? heading[1]! : text.split('\n', 1)[0]!
  return { firstLine: clip(first.trim(), 120), size: body.length }
}

export interface InstructionSecret {
  kind: string
  redacted: string
}

/** Provider secrets (the same matcher as for JavaScript) and credentials inside URLs; values redacted. */
export function secretsIn(url: string, body: string): InstructionSecret[] {
  const provider = scanScripts([{ url, inline: false, body }]).filter((f) => f.exposure === 'secret')
  const found: InstructionSecret[] = provider.map((f) => ({ kind: f.kind, redacted: f.redacted }))
  // URLs with a password the shared matcher already reported are not counted twice.
  const reported = provider.map((f) => f.offset)
  for (const m of body.matchAll(URL_CREDENTIALS)) {
    if (found.length >= MAX_SECRETS) break
    if (reported.some((o) => o >= m.index - 1 && o < m.index + m[0].length)) continue
    const password = m[0].split('://')[1]!.split('@')[0]!.split(':')[1] ?? ''
    if (password.length < 4 || /^(?:\$\{|\$[A-Z_]|<|\*+$|password$|pass$|secret$|xxx)/i.test(password)) continue
    found.push({ kind: 'url-credentials', redacted: clip(redactUrlCredentials(m[0]), 120) })
  }
  return found.slice(0, MAX_SECRETS)
}

export const exposedAgentInstructions = defineCheck({
  id: 'exposed-agent-instructions',
  category: 'exposure',
  title: 'No coding-agent instruction files are served',
  failTitle: 'Coding-agent instruction files are served',
  description: `Reads what the site returns for ${AGENT_INSTRUCTION_PROBES.join(', ')} and judges whether each is an agent instruction file.`,
  why:
    'Instruction files for coding agents describe the code base, its internal services, commands and conventions, and sometimes paste ' +
    'in credentials; deployed with the site they give attackers a map of the application.',
  confirmation:
    'Confirmed by content, never by status code: the body must be Markdown or prose (at least eight words, with a heading, a list ' +
    'item or two lines of prose), must not be an HTML page, JSON or a short "not found"/"forbidden" message, and must differ from ' +
    'what the site returns for a path that cannot exist. Instruction vocabulary is not required: a README-like CLAUDE.md is still ' +
    'that file, deployed by mistake. /README.md itself is not probed, so a site\u2019s README is never a finding. Medium; high when ' +
    'the file contains a provider secret (the same matcher as for JavaScript bundles) or a URL with a password. Evidence: path, first' +
    ' heading or line (cut at 120 characters), size, redacted secrets.',
  severity: 'medium',
  fix: {
    generic:
      'Remove agent instruction files (CLAUDE.md, AGENTS.md, .cursorrules, .cursor/, .windsurfrules, .github/) from the served ' +
      'directory: deploy the build output, not the repository root. Rotate any credential they contain and keep secrets out of them.',
    vercel:
      'Set the Output Directory to the build output (dist, out, build) rather than the repository root, or list the files in ' +
      '.vercelignore:\nCLAUDE.md\nAGENTS.md\n.cursorrules\n.cursor\n.windsurfrules\n.github',
    netlify:
      'Point the publish directory at the build output instead of the repository root. Until fixed, in netlify.toml:\n[[redirects]]\n  ' +
      'from = "/CLAUDE.md"\n  to = "/404.html"\n  status = 404\n  force = true\n(repeat for /AGENTS.md, /.cursorrules, /.cursor/*, ' +
      '/.windsurfrules, /.github/*).',
    nextjs:
      'Keep these files at the project root, never in public/ (Next.js serves public/ as is); move any copy out of public/ and ' +
      'redeploy.',
    nginx:
      'In the server block:\nlocation ~ ^/(?:CLAUDE\\.md|AGENTS\\.md|\\.cursorrules|\\.cursor/|\\.windsurfrules|\\.github/) {\n  return' +
      ' 404;\n}',
    cloudflare:
      'Security > WAF > Custom rules > Create rule: (http.request.uri.path in {"/CLAUDE.md" "/AGENTS.md" "/.cursorrules" ' +
      '"/.windsurfrules"} or starts_with(http.request.uri.path, "/.cursor/") or starts_with(http.request.uri.path, "/.github/")) -> ' +
      'Block.',
  },
  fixTarget: { kind: 'served-file' },
  requires: ['probes'],
  run: ({ probes }) => {
    const judgements = AGENT_INSTRUCTION_PROBES.map((path) => confirmByContent(path, probes, 'an agent instruction file', readInstructions))
    const served = confirmedOnly(judgements)
    if (served.length === 0) return notServedOutcome(judgements, 'agent instruction files')
    const files = served.map(({ path, probe, found }) => {
      const secrets = secretsIn(probe.url, probe.body)
      return { path, ...probeEvidence(probe), firstLine: found.firstLine, size: found.size, secrets }
    })
    const withSecrets = files.filter((f) => f.secrets.length > 0)
    const severity: Severity = withSecrets.length > 0 ? 'high' : 'medium'
    const paths = files.map((f) => f.path)
    return {
      status: 'fail',
      severity,
      evidence: { url: served[0]!.probe.url, path: served[0]!.path, files },
      summary:
        `${listPaths(paths)} ${paths.length === 1 ? 'is' : 'are'} served` +
        (withSecrets.length > 0
          ? `, with ${withSecrets[0]!.secrets[0]!.kind} ${withSecrets[0]!.secrets[0]!.redacted} in ${withSecrets[0]!.path}.`
          : ` ("${files[0]!.firstLine}").`),
    }
  },
})
