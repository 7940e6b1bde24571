// The certificate of the https final URL: trusted for the host name, and not about to expire.

import type { TlsArtifact } from '../types.ts'
import { defineCheck } from '../types.ts'

const MAX_NAMES = 20

/** Verification errors (OpenSSL / Node codes) in words a site owner can act on. */
const REASONS: Record<string, string> = {
  CERT_HAS_EXPIRED: 'the certificate has expired',
  CERT_NOT_YET_VALID: 'the certificate is not valid yet (its start date is in the future)',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'the certificate is self-signed',
  SELF_SIGNED_CERT_IN_CHAIN: 'the chain ends in a self-signed root that browsers do not trust',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'the chain is incomplete: the server does not send the intermediate certificate',
  UNABLE_TO_GET_ISSUER_CERT: 'the issuer of a certificate in the chain is unknown (missing intermediate)',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'the issuer is not trusted or an intermediate certificate is missing',
  ERR_TLS_CERT_ALTNAME_INVALID: 'the certificate is not valid for this host name',
  HOSTNAME_MISMATCH: 'the certificate is not valid for this host name',
  CERT_REVOKED: 'the certificate has been revoked',
  CERT_UNTRUSTED: 'the certificate is not trusted',
  CERT_SIGNATURE_FAILURE: 'the certificate signature does not verify',
  INVALID_CA: 'a certificate in the chain is not allowed to act as a CA',
}

/**
 * Whether a handshake error is about the server's certificate. Alerts are the server complaining about the
 * client (e.g. a client certificate it requires), and protocol or network errors say nothing of the certificate.
 */
export function isCertificateError(error: string): boolean {
  if (/alert/i.test(error)) return false
  return /cert|self[_ -]signed|unable[_ ]to[_ ](?:get|verify)|altname|hostname.*match/i.test(error)
}

/** RFC 6125 matching of a host against the certificate's names: exact, or one left-most wildcard label. */
export function hostCovered(host: string, names: string[]): boolean {
  const h = host.toLowerCase().replace(/\.$/, '')
  return names.some((raw) => {
    const n = raw.toLowerCase().replace(/\.$/, '')
    if (n === h) return true
    if (!n.startsWith('*.')) return false
    const suffix = n.slice(1)
    return h.endsWith(suffix) && !h.slice(0, -suffix.length).includes('.') && h.length > suffix.length
  })
}

function describe(tls: TlsArtifact): Record<string, unknown> {
  return {
    host: tls.host,
    port: tls.port,
    authorized: tls.authorized,
    authorizationError: tls.authorizationError,
    subject: tls.subject,
    issuer: tls.issuer,
    altNames: tls.altNames.slice(0, MAX_NAMES),
    hostCovered: hostCovered(tls.host, tls.altNames),
    validFrom: tls.validFrom,
    validTo: tls.validTo,
    daysRemaining: tls.daysRemaining,
    selfSigned: tls.selfSigned,
  }
}

function lifetimeDays(tls: TlsArtifact): number | null {
  const from = Date.parse(tls.validFrom)
  const to = Date.parse(tls.validTo)
  return Number.isFinite(from) && Number.isFinite(to) && to > from ? (to - from) / 86_400_000 : null
}

export const tlsCertificate = defineCheck({
  id: 'tls-certificate',
  category: 'https',
  title: 'The TLS certificate is valid and not about to expire',
  failTitle: 'The TLS certificate is invalid or about to expire',
  description:
    'Reads the certificate the server presents for the final https URL: whether its chain verifies against the trust store for this ' +
    'host name, who issued it, and how many days it has left.',
  why:
    'Browsers show a full-page warning for an expired, self-signed, mismatched or untrusted certificate: visitors leave, or learn to ' +
    'click through warnings, which is exactly what an interception attack needs. An expiry missed by a broken renewal takes the whole' +
    ' site down.',
  confirmation:
    'Skipped for a site whose final URL is http (judged by https-redirect), or when the handshake failed for a reason unrelated to ' +
    'the certificate (timeout, refused connection, protocol; the error is in the evidence). Fails (critical) when the chain does not ' +
    'verify for the host name (expired, self-signed, hostname mismatch, missing intermediate, untrusted root; the verification error ' +
    'is in the evidence), when a handshake error names the certificate, or when the certificate has expired. Warns (high) under 14 ' +
    'days left and (medium) under 30. Short-lived certificates (e.g. 6-day or 45-day ACME certificates) warn only once a third of ' +
    'their lifetime is left, the point where ACME clients renew, so they do not warn all the time. Not findings: a certificate the ' +
    'scanner was told to trust (pinned for a test environment), any CA or validation level, a self-signed issuer on a chain that ' +
    'verifies.',
  severity: 'critical',
  fix: {
    generic:
      'Serve a certificate from a public CA that covers every host name of the site, with the full chain (leaf + intermediates), and ' +
      'renew it automatically: with certbot, "certbot renew" runs from its systemd timer; check with "openssl s_client -connect ' +
      'example.com:443 -servername example.com -showcerts".',
    vercel:
      'Vercel issues and renews certificates itself: in Project > Settings > Domains, make sure the domain shows "Valid ' +
      'Configuration" (DNS pointing at Vercel, no CAA record blocking Let\'s Encrypt). A custom certificate uploaded with "vercel ' +
      'certs add" must be replaced before it expires.',
    netlify:
      "Netlify provisions Let's Encrypt certificates: Site configuration > Domain management > HTTPS > Verify DNS configuration, " +
      "then Renew certificate. Check that DNS points at Netlify and no CAA record blocks Let's Encrypt. A custom certificate must " +
      'include the full chain.',
    nextjs:
      'Next.js does not terminate TLS: fix it where the site is hosted (Vercel, a proxy, the load balancer). For a self-hosted "next ' +
      'start" behind nginx or Caddy, see the nginx fix; Caddy obtains and renews certificates automatically.',
    nginx:
      'Use the full chain, not only the leaf, and renew automatically:\nssl_certificate     ' +
      '/etc/letsencrypt/live/example.com/fullchain.pem;\nssl_certificate_key /etc/letsencrypt/live/example.com/privkey.pem;\nthen ' +
      '"certbot renew --deploy-hook \'systemctl reload nginx\'" from a timer, and "nginx -t && systemctl reload nginx".',
    cloudflare:
      'SSL/TLS > Edge Certificates: check the Universal certificate is Active for the host (a proxied, orange-cloud record). For Full' +
      ' (strict) mode, the origin also needs a valid certificate: SSL/TLS > Origin Server > Create Certificate, installed on the ' +
      'origin.',
  },
  requires: ['target'],
  optional: ['tls'],
  run: ({ target, tls }) => {
    if (target.scheme !== 'https') {
      return {
        status: 'skipped',
        evidence: {
          url: target.finalUrl,
          reason: 'The final URL is http: there is no certificate to judge (the missing https is judged by https-redirect).',
        },
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
    if (tls.error) {
      const evidence = { host: tls.host, port: tls.port, error: tls.error }
      if (isCertificateError(tls.error)) {
        return { status: 'fail', evidence, summary: `The TLS handshake failed on the certificate: ${tls.error}.` }
      }
      return {
        status: 'skipped',
        evidence,
        summary: `Not applicable: the TLS handshake failed for a reason other than the certificate (${tls.error}).`,
      }
    }

    const evidence = describe(tls)
    if (!tls.authorized) {
      const code = tls.authorizationError ?? 'unverified'
      const reason =
        REASONS[code] ??
        (tls.selfSigned
          ? 'the certificate is self-signed'
          : !evidence.hostCovered
            ? 'the certificate is not valid for this host name'
            : 'the certificate does not verify')
      return {
        status: 'fail',
        evidence: { ...evidence, reason },
        summary: `Browsers reject the certificate of ${tls.host}: ${reason} (${code}).`,
      }
    }
    if (tls.daysRemaining < 0) {
      return {
        status: 'fail',
        evidence: { ...evidence, reason: 'the certificate has expired' },
        summary: `The certificate of ${tls.host} expired on ${tls.validTo}.`,
      }
    }
    const lifetime = lifetimeDays(tls)
    // ACME clients renew with about a third of the lifetime left; before that, a short-lived certificate is healthy.
    const renewalWindow = lifetime === null ? Infinity : lifetime / 3
    if (lifetime !== null) evidence.lifetimeDays = Math.round(lifetime)
    if (tls.daysRemaining < 14 && tls.daysRemaining < renewalWindow) {
      return {
        status: 'warn',
        severity: 'high',
        evidence,
        summary: `The certificate of ${tls.host} expires in ${tls.daysRemaining} day(s) (${tls.validTo}); renewal looks stuck.`,
      }
    }
    if (tls.daysRemaining < 30 && tls.daysRemaining < renewalWindow) {
      return {
        status: 'warn',
        severity: 'medium',
        evidence,
        summary: `The certificate of ${tls.host} expires in ${tls.daysRemaining} days (${tls.validTo}).`,
      }
    }
    return {
      status: 'pass',
      evidence,
      summary: `The certificate of ${tls.host} is trusted, issued by ${tls.issuer || 'an unnamed issuer'}, valid until ${tls.validTo} (${tls.daysRemaining} days left).`,
    }
  },
})
