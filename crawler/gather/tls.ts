// The TLS handshake of an https target, through the egress proxy (CONNECT), without verification so
// that a bad certificate can be described rather than just refused.
import { createHash, X509Certificate } from 'node:crypto'
import { connect as netConnect, type Socket } from 'node:net'
import { connect as tlsConnect, type PeerCertificate } from 'node:tls'
import type { TlsArtifact } from '../../shared/checks/types.ts'
import { errorMessage } from '../../shared/errors.ts'

/** Opens a CONNECT tunnel through the proxy; rejects with the proxy's status line when refused. */
function tunnel(proxyPort: number, host: string, port: number, timeoutMs: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = netConnect(proxyPort, '127.0.0.1')
    const timer = setTimeout(() => (s.destroy(), reject(new Error('timed out'))), timeoutMs)
    let head = ''
    s.once('connect', () => s.write(`CONNECT ${host}:${port} HTTP/1.1\r\nHost: ${host}:${port}\r\n\r\n`))
    const onData = (chunk: Buffer) => {
      head += chunk.toString('latin1')
      const end = head.indexOf('\r\n\r\n')
      if (end < 0) return
      s.off('data', onData)
      clearTimeout(timer)
      const status = head.slice(0, head.indexOf('\r\n'))
      if (!/^HTTP\/1\.[01] 200/.test(status)) {
        s.destroy()
        return reject(new Error(`proxy refused: ${status}`))
      }
      resolve(s)
    }
    s.on('data', onData)
    s.once('error', (e) => (clearTimeout(timer), reject(e)))
  })
}

const dn = (o: Record<string, string | string[]> | undefined) =>
  o
    ? Object.entries(o)
        .map(([k, v]) => `${k}=${Array.isArray(v) ? v.join('+') : v}`)
        .join(', ')
    : ''

/** base64 SHA-256 of the SubjectPublicKeyInfo, the form Chromium's SPKI allow-list uses. */
export function spkiHash(cert: PeerCertificate): string {
  try {
    const der = new X509Certificate(cert.raw).publicKey.export({ type: 'spki', format: 'der' })
    return createHash('sha256').update(der).digest('base64')
  } catch {
    return ''
  }
}

export async function probeTls(
  url: URL,
  proxyPort: number,
  opts: { timeoutMs: number; trustedSpki: string[]; now: number },
): Promise<TlsArtifact> {
  const host = url.hostname.replace(/^\[|\]$/g, '')
  const port = Number(url.port || 443)
  const base: TlsArtifact = {
    host,
    port,
    authorized: false,
    authorizationError: null,
    protocol: null,
    subject: '',
    issuer: '',
    altNames: [],
    validFrom: '',
    validTo: '',
    daysRemaining: 0,
    selfSigned: false,
    error: null,
  }
  let socket: Socket
  try {
    socket = await tunnel(proxyPort, host, port, opts.timeoutMs)
  } catch (e) {
    return { ...base, error: errorMessage(e) }
  }
  return new Promise((resolve) => {
    const isIp = /^[\d.]+$|:/.test(host)
    const tls = tlsConnect({ socket, servername: isIp ? undefined : host, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] })
    const timer = setTimeout(() => finish({ ...base, error: 'TLS handshake timed out' }), opts.timeoutMs)
    let done = false
    function finish(a: TlsArtifact) {
      if (done) return
      done = true
      clearTimeout(timer)
      tls.destroy()
      resolve(a)
    }
    tls.once('error', (e) => finish({ ...base, error: e.message }))
    tls.once('secureConnect', () => {
      const cert = tls.getPeerCertificate(false) as PeerCertificate
      if (!cert?.valid_to) return finish({ ...base, error: 'no certificate presented' })
      const pinned = opts.trustedSpki.includes(spkiHash(cert))
      const validTo = new Date(cert.valid_to)
      const subject = dn(cert.subject as never)
      const issuer = dn(cert.issuer as never)
      finish({
        ...base,
        authorized: tls.authorized || pinned,
        authorizationError: tls.authorized || pinned ? null : String(tls.authorizationError ?? 'unverified'),
        protocol: tls.getProtocol() ?? null,
        subject,
        issuer,
        altNames: (cert.subjectaltname ?? '')
          .split(/,\s*/)
          .filter(Boolean)
          .map((s) => s.replace(/^(DNS|IP Address):/, '')),
        validFrom: new Date(cert.valid_from).toISOString(),
        validTo: validTo.toISOString(),
        daysRemaining: Math.floor((validTo.getTime() - opts.now) / 86_400_000),
        selfSigned: subject === issuer,
      })
    })
  })
}
