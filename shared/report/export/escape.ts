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

/** Characters that open inline Markdown wherever they stand: code, emphasis, links and images,
 * strikethrough, table cells, and the backslash itself. */
const INLINE_SYNTAX = new Set(['\\', '`', '*', '[', ']', '~', '|'])
const ALNUM = /[\p{L}\p{N}]/u
const SPACE = /\s/
/** A line that starts like this would be a heading, quote, list item, setext underline or thematic break. */
const BLOCK_START = /^(#{1,6}( |$)|>|[-+*] |[-=]+ ?$|([-*_])( *\3){2,} *$)/
const ORDERED_START = /^(\d{1,9})([.)])(?= |$)/
/** An entity or numeric reference, which Markdown would show as the character it names. */
const ENTITY = /^&(#\d+|#x[0-9a-f]+|[a-z][a-z0-9]*);/i

/**
 * Target text inside a Markdown table cell or paragraph, on one line, escaped only where Markdown (GitHub's
 * flavour) would read it as syntax, so it reads as itself in a terminal, in an agent's context and in a
 * rendered comment: a backslash before a character that opens markup (links, images, code, emphasis,
 * strikethrough, math, cell breaks) and before a first character that would start a block; `&lt;` for <; an `_` only where
 * it could emphasise (not inside a word, as in x_content_type); an invisible zero-width space after an @ or
 * # that GitHub would turn into a mention (notifying someone) or an issue reference. URLs and ordinary
 * punctuation stay as they are.
 */
export function escapeMarkdown(s: string): string {
  const text = usable(s).replace(/\s+/g, ' ')
  const chars = [...text]
  // $ only opens math with a second one to close it.
  const math = chars.filter((c) => c === '$').length > 1
  let out = ''
  let at = 0 // where chars[i] starts in text
  for (let i = 0; i < chars.length; at += chars[i]!.length, i++) {
    const c = chars[i]!
    const next = chars[i + 1] ?? ''
    const prev = chars[i - 1] ?? ''
    // A * or _ between spaces can neither open nor close emphasis, and an _ inside a word cannot either.
    const inert = (c === '*' || c === '_') && SPACE.test(prev || ' ') && SPACE.test(next || ' ')
    if (inert) out += c
    else if (INLINE_SYNTAX.has(c) || (c === '$' && math)) out += `\\${c}`
    else if (c === '_' && !(ALNUM.test(prev) && ALNUM.test(next))) out += '\\_'
    // < opens raw HTML and <autolinks>. As the one entity it stays HTML-proof even right after a URL, where
    // a renderer's autolink can take a backslash into the link and leave the < bare (marked does).
    else if (c === '<') out += '&lt;'
    else if (c === '&' && ENTITY.test(text.slice(at))) out += '\\&'
    else if ((c === '@' || c === '#') && ALNUM.test(next)) out += `${c}\u200B`
    else out += c
  }
  if (BLOCK_START.test(out)) return `\\${out}`
  return out.replace(ORDERED_START, '$1\\$2')
}

/** Text as one inline code span, whatever backticks it holds: fenced by a longer run, padded when it touches one. */
export function inlineCode(s: string): string {
  const text = usable(s).replace(/\s+/g, ' ')
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length))
  const fence = '`'.repeat(longest + 1)
  const pad = text.startsWith('`') || text.endsWith('`') ? ' ' : ''
  return `${fence}${pad}${text}${pad}${fence}`
}

/** Text as a fenced code block (the evidence): nothing in it is read as Markdown, HTML, a link or a mention. */
export function codeBlock(s: string, info = ''): string {
  const text = usable(s)
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length))
  const fence = '`'.repeat(Math.max(3, longest + 1))
  return `${fence}${info}\n${text}\n${fence}`
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
