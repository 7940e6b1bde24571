// Escaping for the export writers. Summaries, evidence and URLs come from the scanned site, which may be
// hostile: every writer passes them through one of these (or html`...`, for the HTML page) before they
// reach markup.
import { escapeHtml } from '../../lib/html.ts'

/** A character XML 1.0 cannot carry at all: C0 controls other than tab, LF and CR; lone surrogates; U+FFFE/F. */
const unusable = (c: number) =>
  (c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) || (c >= 0xd800 && c <= 0xdfff) || c === 0xfffe || c === 0xffff

/** The text with every unusable character replaced by U+FFFD (iterating by code point, so valid pairs stay whole). */
export function usable(s: string): string {
  let out = ''
  for (const ch of s) out += unusable(ch.codePointAt(0)!) ? '\uFFFD' : ch
  return out
}

/** Text or attribute value for XML (and HTML): the five markup characters as entities, unusable characters replaced. */
export function escapeMarkup(s: string): string {
  return escapeHtml(usable(s))
}

/**
 * Target text inside a Markdown table cell or paragraph, on one line. Every character Markdown (or GitHub's
 * flavour of it) would read as syntax becomes a numeric entity, which renders as the character itself and
 * never as syntax: no links, emphasis, HTML, cell breaks, or @mentions that would notify someone.
 */
export function escapeMarkdown(s: string): string {
  return usable(s)
    .replace(/\s+/g, ' ')
    .replace(/[&<>"'|\\`*_[\]()#!~@:{}+-]/g, (c) => `&#${c.charCodeAt(0)};`)
}

/** At most `max` characters, with an ellipsis when cut. */
export function clip(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`
}

/** Evidence as indented JSON for a person to read, bounded so one huge value cannot swell an export. */
export function evidenceText(evidence: Record<string, unknown>, max = 4_000): string {
  let text: string
  try {
    text = JSON.stringify(evidence, null, 2) ?? '{}'
  } catch {
    text = '(evidence could not be shown)'
  }
  return clip(text, max)
}

/** Evidence on one line: `key: value` pairs, values cut short, for a JUnit failure or a table. */
export function evidenceSummary(evidence: Record<string, unknown>, max = 600): string {
  const parts: string[] = []
  for (const [k, v] of Object.entries(evidence)) {
    if (v === null || v === undefined || (Array.isArray(v) && v.length === 0)) continue
    const value = typeof v === 'string' ? v : JSON.stringify(v)
    parts.push(`${k}: ${clip(value ?? '', 160)}`)
  }
  return clip(parts.join('; '), max)
}
