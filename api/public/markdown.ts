// Markdown to HTML for the /docs pages, with marked. marked does not sanitise, so this renderer does:
//   - raw HTML in the source (a block or an inline tag) is shown as text, never passed through as markup;
//   - a link or image keeps its address only when it is http(s), mailto, relative or a fragment; any other
//     scheme (javascript:, data:, vbscript:...) leaves the text alone;
//   - a link to another page of the docs (tools.md#scan_app) goes to its HTML page (/docs/tools#scan_app);
//   - headings get GitHub's ids, so those fragments land on the HTML page as they do on GitHub.
// Text, code and attributes are escaped by marked itself or here by html`...` (shared/lib/html.ts); what
// marked has already rendered goes in as raw().
import { Marked, type Tokens } from 'marked'
import { escapeHtml, html, raw } from '../../shared/lib/html.ts'

const SAFE_SCHEMES = new Set(['http', 'https', 'mailto'])

/** GitHub's heading id: lower case, punctuation dropped (but - and _), spaces to hyphens. */
export function headingId(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .trim()
    .replace(/\s/g, '-')
}

/** The address a link may carry on a docs page, or null when it must not be a link. */
export function safeHref(href: string, pageSlugs: ReadonlySet<string>): string | null {
  // Browsers drop tabs and newlines inside a URL ("java\tscript:"): judge the address they would use.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: dropping control characters is the point
  const compact = href.replace(/[\u0000-\u0020\u007f]/g, '')
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(compact)
  if (scheme) return SAFE_SCHEMES.has(scheme[1]!.toLowerCase()) ? compact : null
  const page = /^(?:\.\/)?([a-z0-9-]+)\.md(#[^#]*)?$/i.exec(compact)
  if (page && pageSlugs.has(page[1]!)) return `/docs/${page[1]}${page[2] ?? ''}`
  return compact
}

/** The YAML front matter of an agent skill (--- name, description ---), which is not part of the page. */
export const stripFrontMatter = (markdown: string) => markdown.replace(/^---\r?\n[\s\S]*?\r?\n---\r?\n+/, '')

/** A renderer for the pages named in pageSlugs (links between them are rewritten to their HTML pages). */
export function markdownRenderer(pageSlugs: ReadonlySet<string>): (markdown: string) => string {
  let usedIds = new Map<string, number>()
  const marked = new Marked({
    gfm: true,
    renderer: {
      html({ text }: Tokens.HTML | Tokens.Tag) {
        return escapeHtml(text)
      },
      heading({ tokens, depth, text }: Tokens.Heading) {
        const base = headingId(text) || 'section'
        const seen = usedIds.get(base) ?? 0
        usedIds.set(base, seen + 1)
        const id = seen === 0 ? base : `${base}-${seen}`
        return `${html`<h${depth} id="${id}">${raw(this.parser.parseInline(tokens))}</h${depth}>`}\n`
      },
      link({ href, title, tokens }: Tokens.Link) {
        const inner = this.parser.parseInline(tokens)
        const target = safeHref(href, pageSlugs)
        if (target === null) return inner
        return html`<a href="${target}"${title && html` title="${title}"`}>${raw(inner)}</a>`.toString()
      },
      image({ href, title, text }: Tokens.Image) {
        const src = safeHref(href, pageSlugs)
        if (src === null) return escapeHtml(text)
        return html`<img src="${src}" alt="${text}"${title && html` title="${title}"`}>`.toString()
      },
    },
  })
  return (markdown) => {
    usedIds = new Map()
    return marked.parse(stripFrontMatter(markdown), { async: false })
  }
}
