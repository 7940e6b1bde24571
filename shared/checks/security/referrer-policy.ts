// Referrer-Policy from the header (last recognised token wins) and <meta name="referrer"> (which overrides it).

import { defineCheck } from '../types.ts'
import { headerFixes } from '../util/fix.ts'
import { headerValue, splitList } from '../util/http.ts'
import { metaNamed } from '../util/html.ts'

const PRIVATE = new Set(['no-referrer', 'same-origin', 'strict-origin', 'strict-origin-when-cross-origin'])
const LEAKY = new Set(['no-referrer-when-downgrade', 'origin-when-cross-origin', 'origin'])
const UNSAFE = new Set(['unsafe-url'])
const VALID = new Set([...PRIVATE, ...LEAKY, ...UNSAFE])
/** Legacy <meta name="referrer"> values (HTML §4.2.5.3). */
const META_LEGACY: Record<string, string> = {
  never: 'no-referrer',
  default: 'strict-origin-when-cross-origin',
  always: 'unsafe-url',
  'origin-when-crossorigin': 'origin-when-cross-origin',
}

/** The policy a header value sets: the last token browsers recognise, or null. */
export function policyFromHeader(value: string): string | null {
  const tokens = splitList(value).map((t) => t.toLowerCase())
  return tokens.reverse().find((t) => VALID.has(t)) ?? null
}

function policyFromMeta(contents: string[]): string | null {
  let policy: string | null = null
  for (const content of contents) {
    const value = content.trim().toLowerCase()
    const mapped = META_LEGACY[value] ?? value
    if (VALID.has(mapped)) policy = mapped
  }
  return policy
}

export const referrerPolicy = defineCheck({
  id: 'referrer-policy',
  category: 'security',
  title: 'Referrer-Policy keeps URLs private',
  failTitle: 'Referrer-Policy may leak URLs to other sites',
  description: 'Reads the Referrer-Policy header of the main response and <meta name="referrer"> in the page.',
  why: 'Full URLs sent as Referer to other sites can leak paths, search terms, reset tokens and other data in query strings.',
  confirmation:
    'Uses the policy browsers apply: the last recognised token of the header, overridden by a valid <meta name="referrer">. Passes ' +
    'for no-referrer, same-origin, strict-origin and strict-origin-when-cross-origin. Warns for no-referrer-when-downgrade, ' +
    'origin-when-cross-origin and origin (full URLs or origins still leak), and when no valid policy is set (browsers then default to' +
    ' strict-origin-when-cross-origin, which is acceptable, so this is only a warning). Fails for unsafe-url.',
  severity: 'low',
  fix: {
    generic: 'Send "Referrer-Policy: strict-origin-when-cross-origin" (or no-referrer) on every response.',
    ...headerFixes([{ key: 'Referrer-Policy', value: 'strict-origin-when-cross-origin' }]),
  },
  fixTarget: { kind: 'headers', headers: ['referrer-policy'] },
  requires: ['mainResponse'],
  optional: ['page'],
  run: ({ mainResponse, page }) => {
    const header = headerValue(mainResponse.headers, 'referrer-policy')
    const metaContents = page ? metaNamed(page.html, 'referrer') : []
    const fromHeader = header ? policyFromHeader(header) : null
    const fromMeta = policyFromMeta(metaContents)
    const policy = fromMeta ?? fromHeader
    const evidence = {
      url: mainResponse.url,
      header,
      meta: metaContents,
      policy,
      source: fromMeta ? 'meta' : fromHeader ? 'header' : null,
    }
    if (!policy) {
      return {
        status: 'warn',
        evidence,
        summary: header
          ? `Referrer-Policy "${header}" has no valid policy; browsers fall back to strict-origin-when-cross-origin.`
          : 'No Referrer-Policy; browsers fall back to strict-origin-when-cross-origin.',
      }
    }
    if (UNSAFE.has(policy))
      return { status: 'fail', evidence, summary: 'Referrer-Policy unsafe-url sends full URLs to every site, even over http.' }
    if (LEAKY.has(policy))
      return { status: 'warn', evidence, summary: `Referrer-Policy ${policy} still sends URLs or origins where it should not.` }
    return { status: 'pass', evidence, summary: `Referrer-Policy is ${policy}.` }
  },
})
