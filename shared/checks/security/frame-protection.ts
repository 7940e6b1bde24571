// Clickjacking protection: CSP frame-ancestors (which wins when present) or X-Frame-Options.

import { defineCheck } from '../types.ts'
import { judgeFrameAncestors, parseCspHeader } from '../util/csp-parser.ts'
import { headerFixes } from '../util/fix.ts'
import { headerValue, splitList } from '../util/http.ts'

export const frameProtection = defineCheck({
  id: 'frame-protection',
  category: 'security',
  title: 'Framing by other sites is restricted',
  failTitle: 'Other sites may frame the page',
  description: 'Reads Content-Security-Policy frame-ancestors and X-Frame-Options on the main response.',
  why: 'A page that any site can frame can be overlaid with decoys so users click buttons they cannot see (clickjacking).',
  confirmation:
    'Passes when an enforced Content-Security-Policy header has frame-ancestors that does not admit every site, or, without ' +
    'frame-ancestors, X-Frame-Options is DENY or SAMEORIGIN. frame-ancestors wins when both are present, as in browsers. Fails when ' +
    'neither is set, when frame-ancestors admits any site (*, https:), or when X-Frame-Options is ALLOW-FROM (obsolete: browsers ' +
    'ignore it) or invalid. Not counted: frame-ancestors in a <meta> tag or a report-only policy, which browsers do not enforce.',
  severity: 'medium',
  fix: {
    generic:
      "Send \"Content-Security-Policy: frame-ancestors 'none'\" (or 'self' if you frame your own pages), plus \"X-Frame-Options: DENY" +
      '" for old browsers.',
    ...headerFixes([
      { key: 'Content-Security-Policy', value: "frame-ancestors 'none'" },
      { key: 'X-Frame-Options', value: 'DENY' },
    ]),
  },
  fixTarget: { kind: 'headers', headers: ['content-security-policy', 'x-frame-options'] },
  requires: ['mainResponse'],
  run: ({ mainResponse }) => {
    const cspHeader = headerValue(mainResponse.headers, 'content-security-policy')
    const xfo = headerValue(mainResponse.headers, 'x-frame-options')
    const frameAncestors = cspHeader ? judgeFrameAncestors(parseCspHeader(cspHeader)) : null
    const evidence: Record<string, unknown> = {
      url: mainResponse.url,
      frameAncestors: frameAncestors ? frameAncestors.value.join(' ') : null,
      xFrameOptions: xfo,
    }

    if (frameAncestors) {
      if (xfo) evidence.note = 'frame-ancestors takes precedence over X-Frame-Options.'
      if (frameAncestors.open) {
        return { status: 'fail', evidence, summary: `frame-ancestors lets any site frame the page (${frameAncestors.value.join(' ')}).` }
      }
      return {
        status: 'pass',
        evidence,
        summary: `Framing is restricted by frame-ancestors ${frameAncestors.value.join(' ') || "(empty: 'none')"}.`,
      }
    }

    if (!xfo) return { status: 'fail', evidence, summary: 'Neither CSP frame-ancestors nor X-Frame-Options is set.' }
    const values = [...new Set(splitList(xfo).map((v) => v.toLowerCase()))]
    if (values.length > 1 && values.some((v) => v === 'deny' || v === 'sameorigin')) {
      // HTML: conflicting values that include deny/sameorigin block every frame.
      evidence.note = 'Conflicting X-Frame-Options values: browsers block all framing.'
      return { status: 'pass', evidence, summary: 'X-Frame-Options has conflicting values; browsers block all framing.' }
    }
    const value = values[0] ?? ''
    if (value === 'deny' || value === 'sameorigin') {
      return { status: 'pass', evidence, summary: `Framing is restricted by X-Frame-Options ${value.toUpperCase()}.` }
    }
    if (value.startsWith('allow-from')) {
      evidence.note = 'ALLOW-FROM is obsolete: current browsers ignore it, so the page can be framed by anyone.'
      return { status: 'fail', evidence, summary: 'X-Frame-Options ALLOW-FROM is obsolete and ignored by browsers.' }
    }
    return { status: 'fail', evidence, summary: `X-Frame-Options "${xfo}" is not a valid value; browsers ignore it.` }
  },
})
