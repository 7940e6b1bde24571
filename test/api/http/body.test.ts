// The capped parse step every route that reads a body goes through (api/http/body.ts).
import { describe, expect, test } from 'bun:test'
import Elysia from 'elysia'
import { readBody, requestBodies } from '../../../api/http/body.ts'

const post = (body: BodyInit | null, headers: Record<string, string> = {}, path = '/x') =>
  new Request(`http://localhost${path}`, { method: 'POST', body, headers })

/** A chunked body (no Content-Length) of `chunks` pieces of `size` bytes, counting the pieces pulled. */
function chunked(chunks: number, size: number) {
  let pulled = 0
  const stream = new ReadableStream<Uint8Array>({
    pull(c) {
      if (pulled === chunks) return c.close()
      pulled++
      c.enqueue(new Uint8Array(size).fill(97))
    },
  })
  return { stream, pulled: () => pulled }
}

describe('readBody', () => {
  test('gives the text of a body within the limit, and an empty text for no body', async () => {
    expect(await readBody(post('a=1&b=2'), 64)).toEqual({ kind: 'text', text: 'a=1&b=2' })
    expect(await readBody(post(null), 64)).toEqual({ kind: 'text', text: '' })
  })

  test('refuses a declared Content-Length over the limit without reading the body', async () => {
    const req = post('x'.repeat(100), { 'content-length': '100' })
    expect(await readBody(req, 99)).toEqual({ kind: 'too_large' })
    expect(req.bodyUsed).toBe(false)
  })

  test('stops reading a chunked body one byte past the limit', async () => {
    const body = chunked(1_000, 1_024)
    expect(await readBody(post(body.stream), 4_096)).toEqual({ kind: 'too_large' })
    expect(body.pulled()).toBeLessThan(10)
  })

  test('a body that fails while it is read is unreadable, with what was thrown', async () => {
    const broken = new ReadableStream<Uint8Array>({
      pull(c) {
        c.error(new Error('connection reset'))
      },
    })
    const sent = await readBody(post(broken), 1_024)
    expect(sent.kind).toBe('unreadable')
    expect(sent.kind === 'unreadable' && (sent.error as Error).message).toBe('connection reset')
  })
})

describe('the bodyLimit and noBody route options', () => {
  const app = new Elysia()
    .use(requestBodies)
    .post('/x', ({ sent }) => Response.json(sent), { bodyLimit: 64 })
    .post('/none', ({ request }) => Response.json({ used: request.bodyUsed }), { noBody: true })

  test('bodyLimit hands the route what was sent, whatever its Content-Type says', async () => {
    const ok = await app.handle(post('{not json', { 'content-type': 'application/json' }))
    expect(ok.status).toBe(200)
    expect(await ok.json()).toEqual({ kind: 'text', text: '{not json' })
  })

  test('bodyLimit never answers by itself: a body too large reaches the route as too_large', async () => {
    const res = await app.handle(post('x'.repeat(65)))
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ kind: 'too_large' })
  })

  test('noBody leaves the body unread: no parse error for a body that is not what it claims', async () => {
    const res = await app.handle(post('{not json', { 'content-type': 'application/json' }, '/none'))
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ used: false })
  })
})
