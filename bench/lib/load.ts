import { errorMessage } from '../../shared/errors.ts'
// A closed-loop HTTP load client: C workers, each with one request in flight at a time, over fetch's
// keep-alive connection pool, for a fixed duration. The same function drives every side of a
// comparison, so the client's own cost is identical for both.

export interface LoadSpec {
  url: string
  method?: string
  headers: Record<string, string>
  body?: string
  concurrency: number
  durationMs: number
  /** Expected response length in bytes; a different length counts as an error. */
  expectBytes?: number
  /** Hard cap on requests per run, whatever the duration. */
  maxRequests?: number
}

export interface LoadResult {
  requests: number
  errors: number
  elapsedMs: number
  rps: number
  /** First few error descriptions, for the report. */
  errorSamples: string[]
}

export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const maxRequests = spec.maxRequests ?? 50_000_000
  const init: RequestInit = { method: spec.method ?? 'POST', headers: spec.headers, body: spec.body, keepalive: true }
  let requests = 0
  let errors = 0
  const errorSamples: string[] = []
  const noteError = (what: string) => {
    errors++
    if (errorSamples.length < 5) errorSamples.push(what)
  }
  const start = performance.now()
  const end = start + spec.durationMs
  const worker = async () => {
    while (performance.now() < end && requests + errors < maxRequests) {
      try {
        const res = await fetch(spec.url, init)
        const buf = await res.arrayBuffer()
        if (res.status !== 200) noteError(`HTTP ${res.status}: ${new TextDecoder().decode(buf.slice(0, 200))}`)
        else if (spec.expectBytes !== undefined && buf.byteLength !== spec.expectBytes)
          noteError(`body of ${buf.byteLength} bytes, expected ${spec.expectBytes}`)
        else requests++
      } catch (e) {
        noteError(errorMessage(e))
        // A refused connection fails at once; do not spin on it.
        await new Promise((r) => setTimeout(r, 10))
      }
    }
  }
  await Promise.all(Array.from({ length: spec.concurrency }, worker))
  const elapsedMs = performance.now() - start
  return { requests, errors, elapsedMs, rps: (requests * 1000) / elapsedMs, errorSamples }
}
