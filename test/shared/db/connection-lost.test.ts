// A PostgreSQL connection lost while it starts (the server restarting, a failover) fails the query that waited
// for it and nothing else: no rejection escapes to the process. The client's default asks every new connection
// for the server's array types in a promise nobody awaits; losing the connection at that question, with the
// server then refusing the reconnect, rejected that promise unhandled (porsager/postgres#1192, #1223). A relay
// in front of the real PostgreSQL drops the connection at the client's first message after its start-up message
// and stops listening, which is that moment for the client's default and the first query for ours.
import { afterEach, expect, test } from 'bun:test'
import net from 'node:net'
import { postgresClient } from '../../../shared/db/index.ts'
import { PG_ADMIN_URL } from '../../harness/service.ts'
import { within } from '../../harness/wait.ts'

const upstream = new URL(PG_ADMIN_URL)

/**
 * A relay to PostgreSQL that cuts a connection at its client's `cutAt`-th message (the first is its start-up
 * message) and then stops listening; with no `cutAt`, it only relays.
 */
async function cuttingRelay(cutAt = Number.POSITIVE_INFINITY): Promise<{ url: string; cut: Promise<string>; close(): void }> {
  const sockets = new Set<net.Socket>()
  let onCut: (first: string) => void = () => {}
  const cut = new Promise<string>((r) => {
    onCut = r
  })
  const server = net.createServer((client) => {
    const up = net.connect(Number(upstream.port || 5432), upstream.hostname)
    sockets.add(client).add(up)
    let messages = 0
    up.on('data', (d) => client.write(d))
    up.on('error', () => client.destroy())
    client.on('error', () => up.destroy())
    client.on('data', (d) => {
      if (++messages === cutAt) {
        server.close()
        client.destroy()
        up.destroy()
        onCut(d.toString('latin1'))
        return
      }
      up.write(d)
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const { port } = server.address() as net.AddressInfo
  const url = new URL(PG_ADMIN_URL)
  url.host = `127.0.0.1:${port}`
  return {
    url: url.toString(),
    cut,
    close() {
      server.close()
      for (const s of sockets) s.destroy()
    },
  }
}

const escaped: unknown[] = []
const onUnhandled = (e: unknown) => escaped.push(e)
afterEach(() => {
  process.off('unhandledRejection', onUnhandled)
})

test('a connection lost as it starts fails its query and leaves no unhandled rejection', async () => {
  process.on('unhandledRejection', onUnhandled)
  const relay = await cuttingRelay(2)
  const sql = postgresClient(relay.url, 1)
  try {
    const outcome = await sql`select 1 as one`.then(
      () => 'answered',
      (e: { code?: string }) => e.code ?? 'rejected',
    )
    const first = await within(relay.cut, 10_000, 'the relay cutting the connection')
    // The query got the connection's failure (lost under it, or the reconnect refused), not an answer.
    expect(['CONNECTION_CLOSED', 'ECONNREFUSED']).toContain(outcome)
    // The client's first question was the query itself, not the array types.
    expect(first).toContain('select 1 as one')
    expect(first).not.toContain('typarray')
    // Whatever the client drops unhandled is reported within a few event-loop turns; give it far more.
    await Bun.sleep(300)
    expect(escaped.map(String)).toEqual([])
  } finally {
    relay.close()
    await sql.end({ timeout: 1 }).catch(() => {})
  }
})

test('through a relay that cuts nothing, the same client answers', async () => {
  const relay = await cuttingRelay()
  const sql = postgresClient(relay.url, 1)
  try {
    const [row] = await sql<{ one: number }[]>`select 1 as one`
    expect(row?.one).toBe(1)
  } finally {
    relay.close()
    await sql.end({ timeout: 1 }).catch(() => {})
  }
})
