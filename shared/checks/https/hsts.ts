// Strict-Transport-Security on the final https response (RFC 6797).

import { defineCheck } from '../types.ts'
import { headerFixes } from '../util/fix.ts'
import { headerValue, isHttpsUrl } from '../util/http.ts'

/** 180 days, the least the Observatory and most audits accept. */
export const HSTS_MIN_MAX_AGE = 15552000
/** What hstspreload.org requires along with the preload directive. */
const HSTS_PRELOAD_MIN_MAX_AGE = 31536000
const RECOMMENDED = 'max-age=63072000; includeSubDomains'

interface ParsedHsts {
  maxAge: number | null
  includeSubDomains: boolean
  preload: boolean
  error: string | null
}

/** RFC 6797 §6.1: directives separated by ";", names case-insensitive, each at most once, max-age required. */
export function parseHsts(value: string): ParsedHsts {
  const result: ParsedHsts = { maxAge: null, includeSubDomains: false, preload: false, error: null }
  const seen = new Set<string>()
  for (const part of value.split(';')) {
    const item = part.trim()
    if (!item) continue
    const eq = item.indexOf('=')
    const name = (eq === -1 ? item : item.slice(0, eq)).trim().toLowerCase()
    const raw = eq === -1 ? null : item.slice(eq + 1).trim()
    if (seen.has(name)) return { ...result, error: `directive ${name} appears twice` }
    seen.add(name)
    if (name === 'max-age') {
      const m = raw === null ? null : /^"?(\d{1,15})"?$/.exec(raw)
      if (!m) return { ...result, error: `max-age is not a number of seconds: ${raw ?? '(empty)'}` }
      result.maxAge = Number(m[1])
    } else if (name === 'includesubdomains') {
      result.includeSubDomains = true
    } else if (name === 'preload') {
      result.preload = true
    }
  }
  if (result.maxAge === null) return { ...result, error: 'max-age is missing' }
  return result
}

export const hsts = defineCheck({
  id: 'hsts',
  category: 'https',
  title: 'Strict-Transport-Security is set',
  failTitle: 'Strict-Transport-Security is missing or weak',
  description: 'Reads the Strict-Transport-Security header of the final https response and its max-age.',
  why:
    'HSTS makes browsers use https for the site without first trying http, so an attacker on the network cannot downgrade the first ' +
    'request or strip TLS.',
  confirmation:
    'Only for a target whose final URL is https (browsers ignore the header over http: skipped otherwise). Passes with max-age of at ' +
    'least 15552000 seconds (180 days); warns for a shorter max-age; fails when the header is missing, malformed (no or non-numeric ' +
    'max-age, a repeated directive) or max-age=0 (which removes HSTS). A value holding a comma warns: browsers use the first of two ' +
    'header lines but ignore one line holding a comma, and the gatherer sees both joined (a first value of max-age=0 or a malformed ' +
    'one still fails). includeSubDomains and preload are reported in the evidence, not required; a preload directive the preload list' +
    ' would refuse (no includeSubDomains, or max-age under one year) is noted.',
  severity: 'high',
  fix: {
    generic: `Send "Strict-Transport-Security: ${RECOMMENDED}" on every https response once the whole site (and every subdomain, for includeSubDomains) works over https.`,
    ...headerFixes([{ key: 'Strict-Transport-Security', value: RECOMMENDED }]),
    cloudflare:
      'SSL/TLS > Edge Certificates > HTTP Strict Transport Security (HSTS) > Enable: Max Age 12 months (or more), Apply HSTS policy ' +
      'to subdomains on when every subdomain has https.',
  },
  fixTarget: {
    kind: 'headers',
    headers: ['strict-transport-security'],
    where: { cloudflare: 'Cloudflare dashboard: SSL/TLS > Edge Certificates > HTTP Strict Transport Security (HSTS)' },
  },
  requires: ['target', 'mainResponse'],
  run: ({ target, mainResponse }) => {
    const url = mainResponse.url || target.finalUrl
    if (!isHttpsUrl(url)) {
      return {
        status: 'skipped',
        evidence: { url, reason: 'The final URL is http: browsers ignore Strict-Transport-Security over plain HTTP.' },
        summary: 'Not applicable: the site is not served over https.',
      }
    }
    const header = headerValue(mainResponse.headers, 'strict-transport-security')
    if (!header) {
      return { status: 'fail', evidence: { url, header: null }, summary: 'No Strict-Transport-Security header on the https response.' }
    }
    const first = header.split(',')[0]!.trim()
    const parsed = parseHsts(first)
    const evidence = {
      url,
      header,
      maxAge: parsed.maxAge,
      maxAgeDays: parsed.maxAge === null ? null : Math.floor(parsed.maxAge / 86400),
      includeSubDomains: parsed.includeSubDomains,
      preload: parsed.preload,
      ...(first !== header
        ? {
            note: 'The value holds a comma: the header is sent twice, or twice in one line. Browsers use the first of two header lines but ignore a single line holding a comma, and the two cannot be told apart here.',
          }
        : {}),
      ...(parsed.preload && parsed.error === null && (parsed.maxAge! < HSTS_PRELOAD_MIN_MAX_AGE || !parsed.includeSubDomains)
        ? {
            preloadNote:
              'preload is set, but the preload list also requires includeSubDomains and max-age of at least 31536000 (one year).',
          }
        : {}),
    }
    if (parsed.error) {
      return {
        status: 'fail',
        evidence: { ...evidence, error: parsed.error },
        summary: `Strict-Transport-Security is malformed: ${parsed.error}.`,
      }
    }
    if (parsed.maxAge === 0) {
      return { status: 'fail', evidence, summary: 'Strict-Transport-Security has max-age=0, which turns HSTS off.' }
    }
    if (first !== header) {
      return {
        status: 'warn',
        severity: 'medium',
        evidence,
        summary: 'Strict-Transport-Security is sent more than once (or with a comma); browsers may ignore it. Send it exactly once.',
      }
    }
    if (parsed.maxAge! < HSTS_MIN_MAX_AGE) {
      return {
        status: 'warn',
        severity: 'medium',
        evidence,
        summary: `Strict-Transport-Security max-age is ${parsed.maxAge} seconds, under 180 days.`,
      }
    }
    return { status: 'pass', evidence, summary: `Strict-Transport-Security is set for ${evidence.maxAgeDays} days.` }
  },
})
