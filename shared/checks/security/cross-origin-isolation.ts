// Cross-Origin-Opener-Policy, -Embedder-Policy and -Resource-Policy, reported for information only.

import { defineCheck } from '../types.ts'
import { headerFixes } from '../util/fix.ts'
import { headerValue, isHttpsUrl, isLoopbackHost, parseUrl } from '../util/http.ts'

const COOP_VALUES = new Set(['unsafe-none', 'same-origin-allow-popups', 'same-origin', 'noopener-allow-popups'])
const COEP_VALUES = new Set(['unsafe-none', 'require-corp', 'credentialless'])
const CORP_VALUES = new Set(['same-site', 'same-origin', 'cross-origin'])

/** The token of a Structured Fields item (`same-origin; report-to="x"` -> same-origin), or null when absent or unknown. */
function policyToken(value: string | null, known: Set<string>): string | null {
  if (value === null) return null
  const token = /^\s*([a-z-]+)/.exec(value)?.[1] ?? ''
  return known.has(token) ? token : null
}

export const crossOriginIsolation = defineCheck({
  id: 'cross-origin-isolation',
  category: 'security',
  title: 'Cross-origin isolation headers (COOP, COEP, CORP)',
  failTitle: 'Cross-origin isolation headers (COOP, COEP, CORP) are missing',
  description:
    'Reads Cross-Origin-Opener-Policy, Cross-Origin-Embedder-Policy and Cross-Origin-Resource-Policy (and their report-only forms) on' +
    ' the main response.',
  why:
    'COOP same-origin puts the page in its own browsing context group, so a site that opened it (or that it opened) cannot keep a ' +
    'handle on its window: this blocks cross-window attacks and some XS-Leaks. With COEP as well the page is cross-origin isolated, ' +
    'which SharedArrayBuffer and precise timers require.',
  confirmation:
    'Information only: never fails or warns, because COEP can break third-party embeds and COOP same-origin breaks OAuth and payment ' +
    'popups that talk back to their opener. Passes when Cross-Origin-Opener-Policy is same-origin; otherwise reports the three values' +
    ' as info, with crossOriginIsolated true only for COOP same-origin plus COEP require-corp or credentialless. A value browsers do ' +
    'not recognise (the values are case-sensitive) is reported as such: they ignore it. COOP and COEP apply only to pages in a secure' +
    ' context (https or localhost), which the evidence notes.',
  severity: 'info',
  fix: {
    generic:
      'Send "Cross-Origin-Opener-Policy: same-origin" (or same-origin-allow-popups if the page opens OAuth or payment popups). Add ' +
      '"Cross-Origin-Embedder-Policy: require-corp" (or credentialless) only if you need SharedArrayBuffer, after checking every ' +
      'embedded resource still loads. "Cross-Origin-Resource-Policy: same-origin" stops other sites from embedding your responses.',
    ...headerFixes([{ key: 'Cross-Origin-Opener-Policy', value: 'same-origin' }]),
  },
  requires: ['mainResponse'],
  run: ({ mainResponse }) => {
    const h = (name: string) => headerValue(mainResponse.headers, name)
    const coopRaw = h('cross-origin-opener-policy')
    const coepRaw = h('cross-origin-embedder-policy')
    const corpRaw = h('cross-origin-resource-policy')
    const coop = policyToken(coopRaw, COOP_VALUES)
    const coep = policyToken(coepRaw, COEP_VALUES)
    const corp = corpRaw !== null && CORP_VALUES.has(corpRaw) ? corpRaw : null
    const url = parseUrl(mainResponse.url)
    const secure = isHttpsUrl(mainResponse.url) || (url !== null && isLoopbackHost(url.hostname))
    const crossOriginIsolated = secure && coop === 'same-origin' && (coep === 'require-corp' || coep === 'credentialless')
    const unrecognised = [
      ...(coopRaw !== null && coop === null ? [`Cross-Origin-Opener-Policy "${coopRaw}"`] : []),
      ...(coepRaw !== null && coep === null ? [`Cross-Origin-Embedder-Policy "${coepRaw}"`] : []),
      ...(corpRaw !== null && corp === null ? [`Cross-Origin-Resource-Policy "${corpRaw}"`] : []),
    ]
    const reportOnly = {
      coop: h('cross-origin-opener-policy-report-only'),
      coep: h('cross-origin-embedder-policy-report-only'),
    }
    const evidence: Record<string, unknown> = {
      url: mainResponse.url,
      crossOriginOpenerPolicy: coopRaw,
      crossOriginEmbedderPolicy: coepRaw,
      crossOriginResourcePolicy: corpRaw,
      crossOriginIsolated,
      ...(reportOnly.coop !== null || reportOnly.coep !== null ? { reportOnly } : {}),
      ...(unrecognised.length > 0 ? { unrecognised, unrecognisedNote: 'Browsers ignore values they do not recognise.' } : {}),
      ...(!secure ? { note: 'The page is not in a secure context (http), where browsers ignore COOP and COEP.' } : {}),
    }
    const listed = `COOP ${coop ?? coopRaw ?? 'not set'}, COEP ${coep ?? coepRaw ?? 'not set'}, CORP ${corp ?? corpRaw ?? 'not set'}`
    if (coop === 'same-origin' && secure) {
      return {
        status: 'pass',
        evidence,
        summary: `Cross-Origin-Opener-Policy is same-origin${crossOriginIsolated ? ' and the page is cross-origin isolated' : ''} (${listed}).`,
      }
    }
    return { status: 'info', evidence, summary: `Cross-origin isolation headers: ${listed}.` }
  },
})
