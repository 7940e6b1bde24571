// Capped body reads: how much of a body is read, counted in bytes pulled from the stream, not in time.
import { describe, expect, test } from 'bun:test'
import { readRequestText } from '../../../shared/lib/http-body.ts'

/** A chunked request body of `size` bytes in `chunk`-byte pieces, counting the bytes the reader pulled. */
function chunkedRequest(size: number, chunk: number, byte = 0x78): { req: Request; pulled: () => number } {
  let sent = 0
  const body = new ReadableStream<Uint8Array>({
    pull(c) {
      if (sent >= size) return c.close()
      const n = Math.min(chunk, size - sent)
      sent += n
      c.enqueue(new Uint8Array(n).fill(byte))
    },
  })
  const req = new Request('http://127.0.0.1/api/mcp', { method: 'POST', body, duplex: 'half' } as RequestInit)
  return { req, pulled: () => sent }
}

describe('readRequestText', () => {
  test('refuses a chunked body past the limit having read no more than one chunk past it', async () => {
    const limit = 1 << 20
    const { req, pulled } = chunkedRequest(4 << 20, 100_000, 0xff)
    expect(await readRequestText(req, limit)).toBeNull()
    expect(pulled()).toBeLessThanOrEqual(limit + 1 + 100_000)
  })

  test('reads a chunked body of exactly the limit whole, as UTF-8', async () => {
    const { req } = chunkedRequest(1_000, 300)
    expect(await readRequestText(req, 1_000)).toBe('x'.repeat(1_000))
  })

  test('refuses a declared Content-Length past the limit without reading the body', async () => {
    const req = new Request('http://127.0.0.1/api/mcp', { method: 'POST', body: 'x'.repeat(2_000), headers: { 'content-length': '2000' } })
    expect(await readRequestText(req, 1_000)).toBeNull()
    expect(req.bodyUsed).toBe(false)
  })
})
