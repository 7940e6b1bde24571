// Reading a response body with a cap: at most `limit` bytes are kept, and the rest is never read (the stream
// is cancelled), so a target cannot make us hold more than we asked for. Every capped read in the tree
// (egress fetches, the MCP endpoint's request body) goes through here.

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
