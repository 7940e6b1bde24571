// audit_app's "does the start URL answer" check: the egress guard decides, the request is pinned to an
// address it checked, the site sees its own name (Host, SNI), no redirect is followed, a deadline holds.
// Real servers on loopback ports; the resolver is the only stand-in (a name with several addresses).
import { afterAll, describe, expect, test } from 'bun:test'
import { createServer, type Server } from 'node:net'
import { createServer as createTlsServer } from 'node:tls'
import { Reachability } from '../../api/http/reachable.ts'
import { AppError } from '../../shared/errors.ts'
import { testCertificate } from '../fixtures/sites.ts'
import { machineDeadline } from '../harness/machine.ts'
import { until } from '../harness/wait.ts'

const open = { ALLOW_PRIVATE_TARGETS: true, trustedTargetHosts: [], PROBE_TIMEOUT_MS: 3_000 }
const guarded = { ...open, ALLOW_PRIVATE_TARGETS: false }
const stops: Array<() => void> = []
afterAll(() => {
  for (const stop of stops) stop()
})

/** A site that records the Host header of each request it gets. */
function site(opts: { tls?: boolean; status?: number; headers?: Record<string, string> } = {}) {
  const hosts: string[] = []
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    ...(opts.tls ? { tls: testCertificate() } : {}),
    fetch(req) {
      hosts.push(req.headers.get('host') ?? '')
      return new Response('<p>hello</p>', { status: opts.status ?? 200, headers: opts.headers })
    },
  })
  stops.push(() => server.stop(true))
  return { port: server.port as number, hosts }
}

/** A port that accepts connections and never answers. */
async function silent(): Promise<number> {
  const server: Server = createServer(() => {})
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  stops.push(() => server.close())
  return (server.address() as { port: number }).port
}

/** A port nobody listens on. */
async function closedPort(): Promise<number> {
  const server: Server = createServer()
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  const port = (server.address() as { port: number }).port
  await new Promise<void>((r) => server.close(() => r()))
  return port
}

async function refusal(p: Promise<unknown>): Promise<AppError> {
  const e = await p.then(
    () => null,
    (e: unknown) => e,
  )
  if (!(e instanceof AppError)) throw new Error(`expected an AppError, got ${String(e)}`)
  return e
}

describe('Reachability.require', () => {
  test('an http site answers; it sees its own name in Host, not the address the request was pinned to', async () => {
    const s = site()
    await new Reachability(open).require(new URL(`http://localhost:${s.port}/start?x=1`), 'nothing was charged.')
    expect(s.hosts).toEqual([`localhost:${s.port}`])
  })

  test('an https site with a certificate nobody trusts still answers (the audit judges certificates)', async () => {
    const s = site({ tls: true })
    await new Reachability(open).require(new URL(`https://localhost:${s.port}/`), 'nothing was charged.')
    expect(s.hosts).toEqual([`localhost:${s.port}`])
  })

  test('over TLS the site is asked for by its name (SNI), though the connection goes to an address', async () => {
    const { key, cert } = testCertificate()
    const names: string[] = []
    const server = createTlsServer(
      {
        key,
        cert,
        SNICallback: (name, done) => {
          names.push(name)
          done(null, undefined)
        },
      },
      (socket) => socket.on('data', () => socket.end('HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok')),
    )
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
    stops.push(() => server.close())
    const port = (server.address() as { port: number }).port
    await new Reachability(open).require(new URL(`https://localhost:${port}/`), 'x')
    expect(names).toEqual(['localhost'])
  })

  test('an error status counts as an answer, and a redirect is not followed', async () => {
    const elsewhere = site()
    const s = site({ status: 302, headers: { location: `http://127.0.0.1:${elsewhere.port}/` } })
    await new Reachability(open).require(new URL(`http://127.0.0.1:${s.port}/`), 'x')
    expect(s.hosts.length).toBe(1)
    expect(elsewhere.hosts.length).toBe(0)
    const broken = site({ status: 503 })
    await new Reachability(open).require(new URL(`http://127.0.0.1:${broken.port}/`), 'x')
  })

  test('a blocked address is refused with target_blocked before any connection', async () => {
    const s = site()
    for (const host of ['127.0.0.1', 'localhost', '[::1]']) {
      const e = await refusal(new Reachability(guarded).require(new URL(`http://${host}:${s.port}/`), 'nothing was charged.'))
      expect(e.code).toBe('target_blocked')
      expect(e.message).toContain('nothing was charged.')
    }
    expect(s.hosts).toEqual([])
  })

  test('a name whose addresses include a blocked one is refused whole', async () => {
    const s = site()
    const resolver = async () => [
      { address: '93.184.215.14', family: 4 as const },
      { address: '169.254.169.254', family: 4 as const },
    ]
    const e = await refusal(new Reachability(guarded, resolver).require(new URL(`http://example.test:${s.port}/`), 'x'))
    expect(e.code).toBe('target_blocked')
  })

  test('a closed port is target_unreachable with the reason', async () => {
    const port = await closedPort()
    const e = await refusal(new Reachability(open).require(new URL(`http://127.0.0.1:${port}/`), 'nothing was charged.'))
    expect(e.code).toBe('target_unreachable')
    expect(e.message).toMatch(
      /could not be reached \(ECONNREFUSED\); is the app running, and listening on port \d+\?; nothing was charged\.$/,
    )
  })

  test('the next address of a name is tried when one does not connect', async () => {
    const s = site()
    const resolver = async () => [
      { address: '127.0.0.2', family: 4 as const },
      { address: '127.0.0.1', family: 4 as const },
    ]
    // 127.0.0.2 is loopback too, but nothing listens on it at this port (the site is bound to 127.0.0.1).
    await new Reachability(open, resolver).require(new URL(`http://two.test:${s.port}/`), 'x')
    expect(s.hosts).toEqual([`two.test:${s.port}`])
  })

  test('a name that does not resolve in time is refused at the deadline', async () => {
    const never = () => new Promise<never>(() => {})
    const t0 = performance.now()
    const e = await refusal(new Reachability({ ...open, PROBE_TIMEOUT_MS: 300 }, never).require(new URL('http://slow.test/'), 'x'))
    expect(e.code).toBe('target_unreachable')
    expect(e.message).toContain('dns: no answer within 0.3 s')
    expect(performance.now() - t0).toBeLessThan(machineDeadline(5_000))
  })

  test('a site that accepts and never answers is refused at the deadline', async () => {
    const port = await silent()
    const t0 = performance.now()
    const e = await refusal(new Reachability({ ...open, PROBE_TIMEOUT_MS: 400 }).require(new URL(`http://127.0.0.1:${port}/`), 'x'))
    expect(e.code).toBe('target_unreachable')
    expect(e.message).toContain('no answer within 0.4 s')
    expect(performance.now() - t0).toBeLessThan(machineDeadline(5_000))
  })
})

describe('Reachability.connects', () => {
  /** A port that counts the connections it accepts and the bytes sent on them. */
  async function counting(): Promise<{ port: number; connections: () => number; bytes: () => number }> {
    let connections = 0
    let bytes = 0
    const server: Server = createServer((s) => {
      connections++
      s.on('data', (d) => (bytes += d.length))
    })
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
    stops.push(() => server.close())
    return { port: (server.address() as { port: number }).port, connections: () => connections, bytes: () => bytes }
  }

  test('a listening port passes with one connection and no request sent', async () => {
    const s = await counting()
    await new Reachability(open).connects(new URL(`http://127.0.0.1:${s.port}/`), 'x')
    await until(() => s.connections() === 1, machineDeadline(5_000), 'the connection to arrive')
    expect(s.bytes()).toBe(0)
  })

  test('a refused port says what was tried and what to check, after one attempt', async () => {
    const port = await closedPort()
    const e = await refusal(new Reachability(open).connects(new URL(`http://127.0.0.1:${port}/app`), 'Nothing was started.'))
    expect(e.code).toBe('target_unreachable')
    expect(e.message).toBe(
      `http://127.0.0.1:${port}/app could not be reached: nothing answered on 127.0.0.1:${port} (ECONNREFUSED). ` +
        `Is the app running, and listening on port ${port}? Nothing was started.`,
    )
  })

  test('each address of a name is tried in turn and named', async () => {
    const port = await closedPort()
    const resolver = async () => [
      { address: '127.0.0.2', family: 4 as const },
      { address: '127.0.0.1', family: 4 as const },
    ]
    const e = await refusal(new Reachability(open, resolver).connects(new URL(`http://two.test:${port}/`), 'x'))
    expect(e.message).toContain(`nothing answered on 127.0.0.2:${port}, 127.0.0.1:${port}`)
  })

  test('a name that does not resolve says to check the name; a blocked address is target_blocked', async () => {
    const nx = async () => {
      throw Object.assign(new Error('nx'), { code: 'ENOTFOUND' })
    }
    const e = await refusal(new Reachability(open, nx).connects(new URL('https://typo.test/'), 'x'))
    expect(e.code).toBe('target_unreachable')
    expect(e.message).toContain('typo.test did not resolve (dns: ENOTFOUND). Check the host name typo.test.')
    const blocked = await refusal(new Reachability(guarded).connects(new URL('http://127.0.0.1:3000/'), 'x'))
    expect(blocked.code).toBe('target_blocked')
  })

  test('no answer in time is not a refusal: a slow resolver lets the scan go on (a busy machine is slow, not down)', async () => {
    let asked = 0
    const hanging = () => {
      asked++
      return new Promise<never>(() => {})
    }
    const quick = { ...open, PROBE_TIMEOUT_MS: 50 }
    await new Reachability(quick, hanging as never).connects(new URL('http://slow.test:3000/'), 'x')
    expect(asked).toBe(1)
  })
})
