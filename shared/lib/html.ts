// Markup that escapes by default. Every value put into an html`...` template is escaped (Bun.escapeHTML:
// & < > " ' as entities), except markup already built by html`...` or marked trusted with raw(). Arrays
// are rendered item by item and joined; null, undefined and false render nothing, so `${cond && html`...`}`
// and `${list.map(...)}` read as they look. Values in attributes must sit inside quotes, as everywhere here.
// What never goes through the tag: text inside <script> or <style> (escaping would corrupt it; those are
// built from constants or bundles, and raw() says so).

/** Markup that is safe to put in a document as it is. Make one with html`...`, or raw() for trusted text. */
export class Html {
  readonly #markup: string
  constructor(markup: string) {
    this.#markup = markup
  }
  toString(): string {
    return this.#markup
  }
}

/** Text for an HTML (or XML) text node or quoted attribute value. */
export const escapeHtml = (text: string): string => Bun.escapeHTML(text)

/** Marks markup as trusted: a constant, a bundle, or the output of a renderer that escapes itself. */
export const raw = (markup: string): Html => new Html(markup)

function render(value: unknown): string {
  if (value instanceof Html) return value.toString()
  if (value === null || value === undefined || value === false) return ''
  if (Array.isArray(value)) return value.map(render).join('')
  return Bun.escapeHTML(String(value))
}

/** The template with every interpolated value escaped (see above). */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0]!
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1]!
  return new Html(out)
}

/** Pieces of markup joined with a separator (text, escaped), for lists whose items need spacing between them. */
export const joinHtml = (items: readonly Html[], separator: string): Html => new Html(items.join(Bun.escapeHTML(separator)))

/**
 * An attribute value in a configuration snippet a person pastes (web.config): only the characters that would
 * end or break a double-quoted XML attribute, so a CSP keeps its readable 'self' rather than &#x27;self&#x27;.
 */
export const xmlAttribute = (value: string): string => value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;')
