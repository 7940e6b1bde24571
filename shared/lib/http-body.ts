// Reading a body with a cap: at most `limit` bytes are kept, and the rest is never read (the stream is
// cancelled), so neither a target nor a client can make us hold more than we asked for. Every capped read
// in the tree (egress fetches, every request body the api reads) goes through here.

export interface CappedBytes {
  body: Uint8Array
  /** True when the body was longer than the limit. */
  truncated: boolean
}

/** Reads at most `limit` bytes of a body stream. */
export async function readCappedBytes(stream: ReadableStream<Uint8Array> | null, limit: number): Promise<CappedBytes> {
  if (!stream) return { body: new Uint8Array(), truncated: false }
  const reader = stream.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    chunks.push(value)
    size += value.byteLength
    if (size >= limit) {
      await reader.cancel().catch(() => {})
      // A body of exactly `limit` bytes counts as truncated too: the stream is not read on to find out.
      return { body: Buffer.concat(chunks).subarray(0, limit), truncated: true }
    }
  }
  return { body: Buffer.concat(chunks), truncated: false }
}

/** The same, decoded as UTF-8. */
export async function readCappedText(
  stream: ReadableStream<Uint8Array> | null,
  limit: number,
): Promise<{ text: string; truncated: boolean }> {
  const { body, truncated } = await readCappedBytes(stream, limit)
  return { text: Buffer.from(body).toString('utf8'), truncated }
}

/**
 * A request's body as UTF-8 text, or null when it is larger than `limit` bytes: refused at once when the
 * declared Content-Length says so, and when none is declared (chunked) never read past
 * limit + 1 bytes, one byte past the limit telling a body that is too large from one that is exactly the limit.
 */
export async function readRequestText(req: Request, limit: number): Promise<string | null> {
  const declared = Number(req.headers.get('content-length') ?? Number.NaN)
  if (declared > limit) return null
  if (!req.body) return ''
  // A declared length frames the body (HTTP reads no byte past it): read it in one go.
  if (Number.isFinite(declared)) return await req.text()
  // Bytes first, decoded only when kept: decoding the megabyte of a refused body took 40 to 70 ms of the
  // event loop for random bytes (each invalid sequence becomes a U+FFFD), only to throw the text away.
  const { body, truncated } = await readCappedBytes(req.body, limit + 1)
  return truncated ? null : Buffer.from(body).toString('utf8')
}
