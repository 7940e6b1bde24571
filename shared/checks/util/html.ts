// Minimal, linear-time reading of <meta> tags from rendered HTML. No DOM: checks stay pure and fast.

const META_TAG = /<meta\b[^>]*>/gi
const ATTRIBUTE = /([^\s"'<>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }

export function decodeEntities(value: string): string {
  return value.replace(/&(#x[0-9a-f]{1,6}|#\d{1,7}|[a-z]{2,6});/gi, (whole, ref: string) => {
    if (ref[0] === '#') {
      const code = ref[1] === 'x' || ref[1] === 'X' ? Number.parseInt(ref.slice(2), 16) : Number.parseInt(ref.slice(1), 10)
      return Number.isFinite(code) && code <= 0x10ffff ? String.fromCodePoint(code) : whole
    }
    return ENTITIES[ref.toLowerCase()] ?? whole
  })
}

/** Every <meta> tag as a map of lower-cased attribute names to decoded values. */
export function metaTags(html: string): Array<Record<string, string>> {
  const tags: Array<Record<string, string>> = []
  for (const match of html.matchAll(META_TAG)) {
    const inner = match[0].slice(5, -1)
    const attrs: Record<string, string> = {}
    for (const a of inner.matchAll(ATTRIBUTE)) {
      const name = a[1]!.toLowerCase()
      if (name in attrs) continue // first occurrence wins, as in HTML parsing
      attrs[name] = decodeEntities(a[2] ?? a[3] ?? a[4] ?? '')
    }
    tags.push(attrs)
  }
  return tags
}

/** Contents of <meta http-equiv="..."> tags with the given (case-insensitive) http-equiv name, in order. */
export function metaHttpEquiv(html: string, name: string): string[] {
  const wanted = name.toLowerCase()
  return metaTags(html)
    .filter((t) => t['http-equiv']?.trim().toLowerCase() === wanted && t.content !== undefined)
    .map((t) => t.content!)
}

/** Contents of <meta name="..."> tags with the given (case-insensitive) name, in order. */
export function metaNamed(html: string, name: string): string[] {
  const wanted = name.toLowerCase()
  return metaTags(html)
    .filter((t) => t.name?.trim().toLowerCase() === wanted && t.content !== undefined)
    .map((t) => t.content!)
}

/**
 * Whether a body is markup (an SPA fallback, an error page) rather than a plain-text file. Text files such
 * as .env or .git/config never start with "<"; an HTML value inside one (a mail template in a variable)
 * does not make it a page.
 */
export function looksLikeHtml(body: string): boolean {
  return body
    .replace(/^\uFEFF/, '')
    .trimStart()
    .startsWith('<')
}

export interface StartTag {
  /** Lower-cased element name. */
  name: string
  /** Lower-cased attribute names -> decoded values; the first occurrence of a name wins, as in HTML parsing. */
  attrs: Record<string, string>
}

/** Elements whose content is text, not markup: a "<script" inside them is not a tag. */
const RAW_TEXT = new Set(['script', 'style', 'textarea', 'title', 'xmp', 'iframe', 'noembed', 'noframes', 'noscript'])
const FOREIGN = new Set(['svg', 'math'])
const rawTextEnd = new Map<string, RegExp>()
const isSpace = (c: string | undefined) => c === ' ' || c === '\n' || c === '\t' || c === '\r' || c === '\f'
const isAsciiLetter = (c: string | undefined) => c !== undefined && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))

/**
 * Start tags in document order, read in one pass: comments, doctypes and the text of raw-text elements
 * (script, style, textarea, noscript, ...) are skipped, so markup quoted inside them is never mistaken for
 * a tag, and a ">" inside a quoted attribute value does not end the tag. Inside <svg> and <math> no element
 * is raw text, as in the HTML parser. With `names`, only those elements are returned.
 */
export function startTags(html: string, names?: readonly string[]): StartTag[] {
  const wanted = names ? new Set(names.map((n) => n.toLowerCase())) : null
  const tags: StartTag[] = []
  const length = html.length
  let foreignDepth = 0
  let i = html.indexOf('<')
  while (i !== -1 && i < length) {
    const next = html[i + 1]
    if (html.startsWith('<!--', i)) {
      // "<!-->" and "<!--->" close at once in HTML; searching from i + 2 covers them.
      const end = html.indexOf('-->', i + 2)
      i = end === -1 ? length : end + 3
    } else if (next === '!' || next === '?') {
      const end = html.indexOf('>', i + 2)
      i = end === -1 ? length : end + 1
    } else if (next === '/') {
      let j = i + 2
      while (j < length && !isSpace(html[j]) && html[j] !== '>' && html[j] !== '/') j++
      const name = html.slice(i + 2, j).toLowerCase()
      if (FOREIGN.has(name) && foreignDepth > 0) foreignDepth--
      const end = html.indexOf('>', j)
      i = end === -1 ? length : end + 1
    } else if (isAsciiLetter(next)) {
      let j = i + 1
      while (j < length && !isSpace(html[j]) && html[j] !== '>' && html[j] !== '/') j++
      const name = html.slice(i + 1, j).toLowerCase()
      const attrs: Record<string, string> = {}
      let selfClosing = false
      for (;;) {
        while (j < length && (isSpace(html[j]) || html[j] === '/')) {
          selfClosing = html[j] === '/'
          j++
        }
        if (j >= length || html[j] === '>') break
        selfClosing = false
        const nameStart = j
        j++ // a leading "=" belongs to the name in HTML
        while (j < length && !isSpace(html[j]) && html[j] !== '>' && html[j] !== '/' && html[j] !== '=') j++
        const attrName = html.slice(nameStart, j).toLowerCase()
        let k = j
        while (k < length && isSpace(html[k])) k++
        let value = ''
        if (html[k] === '=') {
          k++
          while (k < length && isSpace(html[k])) k++
          const quote = html[k]
          if (quote === '"' || quote === "'") {
            const close = html.indexOf(quote, k + 1)
            value = html.slice(k + 1, close === -1 ? length : close)
            k = close === -1 ? length : close + 1
          } else {
            const start = k
            while (k < length && !isSpace(html[k]) && html[k] !== '>') k++
            value = html.slice(start, k)
          }
          j = k
        }
        if (!(attrName in attrs)) attrs[attrName] = decodeEntities(value)
      }
      i = j + 1
      if (!wanted || wanted.has(name)) tags.push({ name, attrs })
      if (FOREIGN.has(name) && !selfClosing) foreignDepth++
      else if (foreignDepth === 0 && RAW_TEXT.has(name)) {
        let end = rawTextEnd.get(name)
        if (!end) rawTextEnd.set(name, (end = new RegExp(`</${name}[\\t\\n\\f\\r />]`, 'gi')))
        end.lastIndex = i
        const found = end.exec(html)
        i = found ? found.index : length
      }
    } else {
      i++
    }
    i = html.indexOf('<', i)
  }
  return tags
}

/** The document base URL: the first <base href> resolved against the document's URL, or the URL itself. */
export function documentBaseUrl(html: string, documentUrl: string): string {
  const base = startTags(html, ['base']).find((t) => t.attrs.href !== undefined)
  if (!base) return documentUrl
  try {
    return new URL(base.attrs.href!.trim(), documentUrl).href
  } catch {
    return documentUrl
  }
}
