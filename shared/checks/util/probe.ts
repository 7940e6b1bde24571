// Helpers for exposed-file probes: a path is judged by what it returned, compared with what the app
// answers for a path that cannot exist (single-page apps answer 200 with index.html for every path).
// A file counts as served only when its content confirms it; the status code never does.

import type { CheckOutcome, ProbeResult } from '../types.ts'
import { BASELINE_PROBE } from '../probe-paths.ts'

const normalise = (body: string) => body.replace(/\s+/g, ' ').trim()

/** The body with every occurrence of the requested path replaced, so "Cannot GET /.env" matches "Cannot GET /<baseline>". */
function withoutPath(body: string, path: string): string {
  return path.length > 1 ? body.split(path).join('\u0000') : body
}

/** Each answer's normalised body, computed once: several checks compare every probe with the baseline. */
const normalised = new WeakMap<ProbeResult, string>()

function normalisedBody(probe: ProbeResult, path: string): string {
  let text = normalised.get(probe)
  if (text === undefined) {
    text = normalise(withoutPath(probe.body, path))
    normalised.set(probe, text)
  }
  return text
}

/** True when the probe's body is the same as the baseline's: the app's catch-all answer, not the file. */
export function sameAsBaseline(probe: ProbeResult, probes: Record<string, ProbeResult>): boolean {
  const baseline = probes[BASELINE_PROBE]
  if (!baseline || baseline.status === 0 || probe === baseline) return false
  const a = normalisedBody(probe, probe.path)
  return a.length > 0 && a === normalisedBody(baseline, BASELINE_PROBE)
}

/**
 * The main response and every probe that got an answer of its own: not the answer for a path that cannot
 * exist, nor one equal to it (the app's catch-all is not a page at that path). For checks that read pages.
 */
export function ownAnswers(
  main: { url: string; status: number; body: string },
  probes: Record<string, ProbeResult>,
): Array<{ url: string; status: number; body: string }> {
  const probed = Object.values(probes).filter((p) => p.path !== BASELINE_PROBE && p.status !== 0 && !p.error && !sameAsBaseline(p, probes))
  return [{ url: main.url, status: main.status, body: main.body }, ...probed]
}

export function probeEvidence(probe: ProbeResult): Record<string, unknown> {
  return { url: probe.url, status: probe.status, contentType: probe.contentType || null }
}

const LEADING_COMMENT = /^<!--[\s\S]{0,4000}?-->\s*/

/**
 * Whether a body is a page (an SPA fallback, an error page) rather than a file whose text may start with
 * "<": PHP source (<?php), XML documents and Markdown opening with an HTML comment are files, not pages.
 */
export function isHtmlPage(body: string): boolean {
  let head = body
    .slice(0, 8_192)
    .replace(/^\uFEFF/, '')
    .trimStart()
  for (let i = 0; i < 5 && head.startsWith('<!--'); i++) {
    const stripped = head.replace(LEADING_COMMENT, '')
    if (stripped === head) break
    head = stripped
  }
  if (!head.startsWith('<')) return false
  if (/^<\?(?:php\b|=)/i.test(head)) return false
  // An XML document (web.config, an IDE's workspace.xml) is a file; XHTML names its html element early.
  if (/^<\?xml\b/i.test(head) || /^<configuration\b/i.test(head)) return /<html\b/i.test(head.slice(0, 2_048))
  return true
}

/** The first bytes of a probe's answer as sent (empty when the gatherer kept none). */
export function headBytes(probe: ProbeResult): Uint8Array {
  return probe.head ? Uint8Array.from(Buffer.from(probe.head, 'base64')) : new Uint8Array()
}

/** Whether `bytes` holds `signature` at `offset`. */
export function hasBytes(bytes: Uint8Array, signature: readonly number[], offset = 0): boolean {
  if (bytes.length < offset + signature.length) return false
  return signature.every((b, i) => bytes[offset + i] === b)
}

/** What one probed path turned out to be. */
export type ProbeJudgement<T> =
  /** The content is the file: `found` is what the confirming reader returned. */
  | { state: 'confirmed'; path: string; probe: ProbeResult; found: T }
  /** The path is not in the artifacts (an older scan, or a probe list without it). */
  | { state: 'not-probed'; path: string }
  /** The request got no answer (timeout, refused, blocked). */
  | { state: 'unanswered'; path: string; probe: ProbeResult; reason: string }
  /** An answer that is not the file: an HTML page, the catch-all answer, or other content. */
  | { state: 'absent'; path: string; probe: ProbeResult; reason: string }

/**
 * The one gate for exposed files: the answer must not be an HTML page, must differ from the answer for a
 * path that cannot exist, and `confirm` must recognise its content (it returns what it read, or null).
 * `target` is a path in `probes` or an already fetched result (a source map). Status codes are ignored.
 */
export function confirmByContent<T>(
  target: string | ProbeResult,
  probes: Record<string, ProbeResult>,
  what: string,
  confirm: (body: string, probe: ProbeResult) => T | null,
): ProbeJudgement<T> {
  const probe = typeof target === 'string' ? probes[target] : target
  const path = typeof target === 'string' ? target : target.path
  if (!probe) return { state: 'not-probed', path }
  if (probe.status === 0 || probe.error)
    return { state: 'unanswered', path, probe, reason: `The probe failed: ${probe.error ?? 'no response'}.` }
  if (probe.body.trim() === '') return { state: 'absent', path, probe, reason: 'The answer is empty.' }
  if (isHtmlPage(probe.body)) return { state: 'absent', path, probe, reason: `The answer is an HTML page, not ${what}.` }
  if (sameAsBaseline(probe, probes))
    return { state: 'absent', path, probe, reason: 'The answer is the same as for a path that cannot exist.' }
  const found = confirm(probe.body, probe)
  if (found === null) return { state: 'absent', path, probe, reason: `The answer does not look like ${what}.` }
  return { state: 'confirmed', path, probe, found }
}

/** The confirmed judgements, narrowed. */
export function confirmedOnly<T>(judgements: ReadonlyArray<ProbeJudgement<T>>): Array<Extract<ProbeJudgement<T>, { state: 'confirmed' }>> {
  return judgements.filter((j): j is Extract<ProbeJudgement<T>, { state: 'confirmed' }> => j.state === 'confirmed')
}

/**
 * The outcome when nothing was confirmed: skipped when no path got an answer (or none was probed), otherwise
 * a pass listing what each path answered.
 */
export function notServedOutcome(judgements: ReadonlyArray<ProbeJudgement<unknown>>, what: string): CheckOutcome {
  const answered = judgements.filter((j) => j.state === 'absent')
  const checked = judgements.map((j) =>
    j.state === 'not-probed'
      ? { path: j.path, reason: 'Not probed.' }
      : { path: j.path, ...probeEvidence(j.probe), reason: j.state === 'confirmed' ? 'Served.' : j.reason },
  )
  if (answered.length === 0) {
    const probed = judgements.some((j) => j.state !== 'not-probed')
    return {
      status: 'skipped',
      evidence: { checked, reason: probed ? 'No probe got an answer.' : 'The paths were not probed.' },
      summary: probed ? `Not applicable: the probes for ${what} got no answer.` : `Not applicable: ${what} were not probed.`,
    }
  }
  return { status: 'pass', evidence: { checked }, summary: `No ${what} served (${answered.length} path(s) checked by content).` }
}

/** "a", "a and b", "a, b and 2 more". */
export function listPaths(paths: readonly string[], max = 2): string {
  if (paths.length <= 1) return paths[0] ?? ''
  if (paths.length <= max) return `${paths.slice(0, -1).join(', ')} and ${paths[paths.length - 1]}`
  return `${paths.slice(0, max).join(', ')} and ${paths.length - max} more`
}
