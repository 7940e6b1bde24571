// The TLS protocol version negotiated with the https final URL (RFC 8996 deprecates TLS 1.0 and 1.1).

import { defineCheck } from '../types.ts'

/** Protocol names as Node reports them (tls.getProtocol()), oldest first. */
const LEGACY = new Set(['SSLv2', 'SSLv3', 'TLSv1', 'TLSv1.1'])

/** Handshake errors meaning the server would not speak TLS 1.2 or 1.3, which is all the probe offers. */
export function isProtocolVersionError(error: string): boolean {
  return /protocol[_ ]version|unsupported[_ ]protocol|no[_ ]protocols[_ ]available/i.test(error)
}

export const tlsProtocol = defineCheck({
  id: 'tls-protocol',
  category: 'https',
  title: 'TLS 1.2 or newer is negotiated',
  failTitle: 'An outdated TLS version is negotiated',
  description: 'Reads the TLS protocol version negotiated with the server of the final https URL.',
  why:
    'SSL 3.0, TLS 1.0 and TLS 1.1 have known weaknesses (POODLE, BEAST, weak MACs) and are deprecated (RFC 8996); current browsers ' +
    'refuse them, so a server that offers nothing newer is both insecure and unreachable.',
  confirmation:
    'Skipped for a site whose final URL is http, or when the handshake failed for another reason (the error is in the evidence). ' +
    'Passes for TLS 1.3, and for TLS 1.2 with a note that TLS 1.3 is faster and drops legacy cipher suites. Fails when the negotiated' +
    ' protocol is older than TLS 1.2, or when the handshake failed because the server supports neither TLS 1.2 nor 1.3. The probe ' +
    'offers TLS 1.2 and 1.3 and records the best version both sides share: it does not prove that TLS 1.0 and 1.1 are disabled on the' +
    ' server, so their mere support is not judged.',
  severity: 'high',
  fix: {
    generic:
      'Enable TLS 1.2 and 1.3 on the server or load balancer and disable everything older, e.g. in OpenSSL-based servers "MinProtocol' +
      ' = TLSv1.2". Check with "openssl s_client -connect example.com:443 -tls1_3".',
    vercel:
      'Vercel serves TLS 1.2 and 1.3 on its edge; an older protocol means the domain does not point at Vercel: fix its DNS in Project >' +
      ' Settings > Domains.',
    netlify:
      'Netlify serves TLS 1.2 and 1.3; an older protocol means the domain does not point at Netlify or a proxy sits in front of it: ' +
      'check the DNS records in Domain management.',
    nextjs:
      'Next.js does not terminate TLS: set the protocols where TLS ends (Vercel, nginx, the load balancer); see the nginx fix for a ' +
      'self-hosted proxy.',
    nginx:
      'In the http or server block:\nssl_protocols TLSv1.2 TLSv1.3;\nssl_prefer_server_ciphers off;\nthen "nginx -t && systemctl reload' +
      ' nginx".',
    cloudflare: 'SSL/TLS > Edge Certificates > Minimum TLS Version: TLS 1.2, and TLS 1.3: On.',
  },
  requires: ['target'],
  optional: ['tls'],
  run: ({ target, tls }) => {
    if (target.scheme !== 'https') {
      return {
        status: 'skipped',
        evidence: { url: target.finalUrl, reason: 'The final URL is http: no TLS is negotiated.' },
        summary: 'Not applicable: the site is not served over https.',
      }
    }
    if (!tls) {
      return {
        status: 'skipped',
        evidence: { url: target.finalUrl, reason: 'The TLS handshake was not recorded.' },
        summary: 'Not applicable: no TLS handshake was recorded.',
      }
    }
    const evidence: Record<string, unknown> = { host: tls.host, port: tls.port, protocol: tls.protocol }
    if (tls.error) {
      evidence.error = tls.error
      if (isProtocolVersionError(tls.error)) {
        evidence.note = 'The probe offered TLS 1.2 and TLS 1.3; the server accepted neither.'
        return { status: 'fail', evidence, summary: `${tls.host} supports neither TLS 1.2 nor TLS 1.3 (${tls.error}).` }
      }
      return { status: 'skipped', evidence, summary: `Not applicable: the TLS handshake failed (${tls.error}).` }
    }
    if (!tls.protocol || tls.protocol === 'unknown') {
      return {
        status: 'skipped',
        evidence: { ...evidence, reason: 'The negotiated protocol was not reported.' },
        summary: 'Not applicable: the negotiated TLS protocol is unknown.',
      }
    }
    if (LEGACY.has(tls.protocol)) {
      return {
        status: 'fail',
        ...(tls.protocol.startsWith('SSL') ? { severity: 'critical' as const } : {}),
        evidence,
        summary: `${tls.host} negotiated ${tls.protocol}, which is deprecated and refused by current browsers.`,
      }
    }
    if (tls.protocol === 'TLSv1.2') {
      evidence.note = 'TLS 1.2 is acceptable; enabling TLS 1.3 saves a round trip per connection and drops legacy cipher suites.'
      return { status: 'pass', evidence, summary: `${tls.host} negotiated TLS 1.2 (TLS 1.3 was not offered by the server).` }
    }
    return { status: 'pass', evidence, summary: `${tls.host} negotiated ${tls.protocol}.` }
  },
})
