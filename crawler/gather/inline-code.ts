// The inline code of a rendered page that a Content-Security-Policy must allow for the page to keep working:
// executable <script> blocks, <style> blocks, event handler attributes (onclick=...) and style attributes,
// each by the SHA-256 a CSP hash source takes. Read in the page, hashed here, bounded by GATHER_LIMITS.
import { createHash } from 'node:crypto'
import type { Page } from 'playwright-core'
import type { InlineCode, InlineItem } from '../../shared/checks/types.ts'
import { GATHER_LIMITS } from './limits.ts'

interface RawInline {
  scripts: Array<{ text: string; nonce: boolean }>
  scriptCount: number
  handlers: string[]
  handlerCount: number
  handlerNames: string[]
  styles: string[]
  styleCount: number
  styleAttributes: string[]
  styleAttributeCount: number
}

/** Runs in the page: collects the texts, distinct and bounded. Kept self-contained (it is serialised). */
function readInline(limits: { items: number; elements: number }): RawInline {
  // Types the browser runs as code: classic and module scripts, import maps, speculation rules. JSON and
  // template blocks (application/json, ld+json, text/template) are data and need nothing from the policy.
  const JS = /^(?:|text\/javascript|application\/javascript|application\/ecmascript|text\/ecmascript|module|importmap|speculationrules)$/i
  const out: RawInline = {
    scripts: [],
    scriptCount: 0,
    handlers: [],
    handlerCount: 0,
    handlerNames: [],
    styles: [],
    styleCount: 0,
    styleAttributes: [],
    styleAttributeCount: 0,
  }
  const push = (list: string[], value: string) => {
    if (list.length < limits.items && !list.includes(value)) list.push(value)
  }
  for (const el of Array.from(document.querySelectorAll('script:not([src])'))) {
    const type = (el.getAttribute('type') ?? '').trim()
    if (!JS.test(type)) continue
    out.scriptCount++
    const text = el.textContent ?? ''
    if (out.scripts.length < limits.items && !out.scripts.some((s) => s.text === text))
      out.scripts.push({ text, nonce: (el as HTMLScriptElement).nonce !== '' || el.hasAttribute('nonce') })
  }
  for (const el of Array.from(document.querySelectorAll('style'))) {
    out.styleCount++
    push(out.styles, el.textContent ?? '')
  }
  const all = document.getElementsByTagName('*')
  for (let i = 0; i < all.length && i < limits.elements; i++) {
    const el = all[i]!
    let handler = false
    for (const attr of Array.from(el.attributes)) {
      if (attr.name === 'style') {
        out.styleAttributeCount++
        push(out.styleAttributes, attr.value)
      } else if (/^on[a-z]+$/.test(attr.name)) {
        handler = true
        push(out.handlers, attr.value)
        if (out.handlerNames.length < 10 && !out.handlerNames.includes(attr.name)) out.handlerNames.push(attr.name)
      }
    }
    if (handler) out.handlerCount++
  }
  return out
}

function item(text: string): InlineItem {
  return {
    sha256: createHash('sha256').update(text, 'utf8').digest('base64'),
    length: text.length,
    text: text.slice(0, GATHER_LIMITS.inlineText),
  }
}

/** The page's inline code, hashed; undefined when the page could not be read. */
export async function readInlineCode(page: Page): Promise<InlineCode | undefined> {
  const raw = await page
    .evaluate(readInline, { items: GATHER_LIMITS.inlineItems, elements: GATHER_LIMITS.inlineElements })
    .catch(() => null)
  if (!raw) return undefined
  return {
    scripts: raw.scripts.map((s) => ({ ...item(s.text), nonce: s.nonce })),
    scriptCount: raw.scriptCount,
    handlers: raw.handlers.map(item),
    handlerCount: raw.handlerCount,
    handlerNames: raw.handlerNames,
    styles: raw.styles.map(item),
    styleCount: raw.styleCount,
    styleAttributes: raw.styleAttributes.map(item),
    styleAttributeCount: raw.styleAttributeCount,
  }
}
