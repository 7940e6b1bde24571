// Content-Security-Policy: enforced policies from the header and from <meta http-equiv>, judged on whether
// they stop injected scripts. Several policies all apply, so one strict policy is enough.

import { defineCheck, type CheckOutcome, type HttpResponseArtifact, type PageArtifact } from '../types.ts'
import {
  blocksObjects,
  judgeFrameAncestors,
  judgeScripts,
  parseCspHeader,
  parseCspMeta,
  restrictsBaseUri,
  serialise,
  type CspPolicy,
} from '../util/csp-parser.ts'
import { asPageSources, buildCsp, cspAdviceText, pageSources } from '../util/csp-builder.ts'
import { headerFixes } from '../util/fix.ts'
import { headerValue } from '../util/http.ts'
import { metaHttpEquiv } from '../util/html.ts'

const RECOMMENDED = "default-src 'self'; script-src 'self'; object-src 'none'; base-uri 'self'; frame-ancestors 'none'"

export const csp = defineCheck({
  id: 'csp',
  category: 'security',
  title: 'Content-Security-Policy restricts scripts',
  failTitle: 'Content-Security-Policy does not restrict scripts',
  description:
    'Reads the Content-Security-Policy response header and any <meta http-equiv="Content-Security-Policy"> in the page, and judges ' +
    'script-src (or default-src), object-src and base-uri.',
  why:
    'A strict policy is the main defence in depth against cross-site scripting: even when an attacker injects markup, the browser ' +
    'refuses to run scripts the policy does not allow.',
  confirmation:
    'Fails when no enforced policy exists (a Content-Security-Policy-Report-Only header alone enforces nothing), or when no policy ' +
    "restricts scripts: script-src (or default-src) allowing 'unsafe-inline' without a nonce or hash, 'unsafe-eval', or any host (*, " +
    "http:, https:, data:). Warns when scripts are restricted but object-src 'none' (or default-src 'none') or a non-wildcard " +
    "base-uri is missing. Not findings: 'unsafe-inline' next to a nonce or hash (CSP3 browsers ignore it), host or scheme allowlists " +
    "next to 'strict-dynamic' (ignored too), and a lax policy when another enforced policy is strict. frame-ancestors is reported in " +
    'the evidence but not judged here: frame-protection judges framing.',
  severity: 'high',
  fix: {
    generic:
      `Send a Content-Security-Policy header that allows scripts only from your origin and by hash or nonce, e.g. "${RECOMMENDED}". ` +
      "A scan's advice computes the policy from the page itself: its inline scripts' hashes and the origins it loads from. Start with " +
      'Content-Security-Policy-Report-Only to find breakage, then enforce it.',
    ...headerFixes([{ key: 'Content-Security-Policy', value: RECOMMENDED }]),
  },
  fixTarget: { kind: 'headers', headers: ['content-security-policy'] },
  requires: ['mainResponse'],
  optional: ['page', 'target'],
  // The policy to send, computed from the page's own sources (evidence.pageSources): see util/csp-builder.ts.
  advise: (result, platform) => {
    if (result.status !== 'fail' && result.status !== 'warn') return null
    const sources = asPageSources(result.evidence.pageSources)
    const reportOnlySent = typeof result.evidence.reportOnly === 'string' && result.evidence.reportOnly.length > 0
    return sources ? cspAdviceText(buildCsp(sources, { reportOnlySent }), platform, sources.page) : null
  },
  run: ({ mainResponse, page, target }) => {
    const withSources = (outcome: CheckOutcome): CheckOutcome => {
      if (!page || (outcome.status !== 'fail' && outcome.status !== 'warn')) return outcome
      // The plain-HTTP body is the same document only when it is the page the browser ended on.
      const sameDocument = sameUrl(mainResponse.url, page.finalUrl) && /html/i.test(mainResponse.contentType) && !mainResponse.bodyTruncated
      const sources = pageSources({
        pageUrl: page.finalUrl,
        requests: page.requests,
        inline: page.inline,
        serverHtml: sameDocument ? mainResponse.body : null,
        selfOrigins: target ? [target.url, target.finalUrl] : [],
      })
      return { ...outcome, evidence: { ...outcome.evidence, pageSources: sources } }
    }
    return withSources(judge(mainResponse, page))
  },
})

const sameUrl = (a: string, b: string) => a.replace(/#.*$/, '') === b.replace(/#.*$/, '')

function judge(mainResponse: HttpResponseArtifact, page: PageArtifact | null): CheckOutcome {
  {
    const header = headerValue(mainResponse.headers, 'content-security-policy')
    const reportOnlyHeader = headerValue(mainResponse.headers, 'content-security-policy-report-only')
    const metaContents = page ? metaHttpEquiv(page.html, 'content-security-policy') : []
    const enforced: CspPolicy[] = [
      ...(header ? parseCspHeader(header) : []),
      ...metaContents.map(parseCspMeta).filter((p): p is CspPolicy => p !== null),
    ]
    const evidence: Record<string, unknown> = {
      url: mainResponse.url,
      header: header ?? null,
      meta: metaContents,
      reportOnly: reportOnlyHeader ?? null,
    }

    if (enforced.length === 0) {
      if (reportOnlyHeader) {
        return {
          status: 'fail',
          evidence: { ...evidence, note: 'Only Content-Security-Policy-Report-Only is sent: violations are reported, nothing is blocked.' },
          summary: 'Only a report-only Content-Security-Policy is sent, so nothing is enforced.',
        }
      }
      return { status: 'fail', evidence, summary: 'No Content-Security-Policy header or meta tag.' }
    }

    // Reported only: framing is judged by frame-protection, which also accepts X-Frame-Options.
    const frameAncestors = judgeFrameAncestors(enforced)
    evidence.frameAncestors = frameAncestors ? frameAncestors.value.join(' ') : null
    if (!frameAncestors) {
      evidence.frameAncestorsNote =
        'No enforced header policy sets frame-ancestors (a <meta> policy cannot); framing is judged by frame-protection.'
    }

    const judged = enforced.map((policy) => ({ policy, ...judgeScripts(policy) }))
    const strict = judged.find((j) => j.problems.length === 0)
    evidence.policies = judged.map((j) => ({
      source: j.policy.source,
      policy: serialise(j.policy),
      scriptDirective: j.directive,
      problems: j.problems,
    }))

    if (!strict) {
      const problems = [...new Set(judged.flatMap((j) => j.problems))]
      return {
        status: 'fail',
        evidence: { ...evidence, problems },
        summary: `Content-Security-Policy does not stop injected scripts: ${problems[0]}.`,
      }
    }

    const missing: string[] = []
    if (!enforced.some(blocksObjects)) missing.push("object-src 'none'")
    if (!enforced.some(restrictsBaseUri)) missing.push('base-uri')
    if (missing.length > 0) {
      return {
        status: 'warn',
        severity: 'medium',
        evidence: { ...evidence, missing },
        summary: `Content-Security-Policy restricts scripts but lacks ${missing.join(' and ')}.`,
      }
    }
    return {
      status: 'pass',
      evidence,
      summary: `Content-Security-Policy restricts scripts (${strict.directive}: ${strict.value.join(' ')}).`,
    }
  }
}
