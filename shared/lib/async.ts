// Small waiting helpers, each with a way out: a sleep that an abort ends early, and a deadline for any
// promise, so no wait in the service depends on the other side answering.

/** Waits ms, or less when signal aborts (then it resolves at once, never rejects). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal?.aborted || ms <= 0) return resolve()
    const done = () => {
      clearTimeout(t)
      signal?.removeEventListener('abort', done)
      resolve()
    }
    const t = setTimeout(done, ms)
    signal?.addEventListener('abort', done, { once: true })
  })
}

export class DeadlineExceeded extends Error {
  constructor(what: string, ms: number) {
    super(`${what} did not finish within ${ms} ms`)
  }
}

/** p's outcome, or a DeadlineExceeded rejection once ms have passed. p itself is not cancelled. */
export function withDeadline<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineExceeded(what, ms)), ms)
  })
  return Promise.race([p, deadline]).finally(() => clearTimeout(timer))
}

/** p's value, or fallback once ms have passed or when p rejects. */
export function within<T>(p: Promise<T>, ms: number, fallback: T): Promise<T> {
  return withDeadline(p, ms, 'wait').catch(() => fallback)
}

/** Like Promise.all over items.map(fn), with at most `limit` calls running at once; order kept. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length)
  let next = 0
  const lane = async () => {
    while (next < items.length) {
      const i = next++
      out[i] = await fn(items[i]!, i)
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane))
  return out
}
