// Waiting in tests, always with a deadline. A condition is polled until it holds; each attempt is itself
// bounded by the time left, so one hung call (a fetch to a service that stopped answering, a query on a
// cut connection) fails the wait with its name instead of holding the test until the runner kills it.

export interface UntilOptions {
  /** Pause between attempts (ms). */
  everyMs?: number
  /** Let an error thrown by an attempt fail the wait at once, instead of counting as "not yet". */
  rethrow?: boolean
}

type Truthy<T> = Exclude<T, null | undefined | false | 0 | ''>

export class DeadlineError extends Error {}

/** Resolves with p's value, or rejects with a DeadlineError when it has not settled within ms. */
export function within<T>(p: Promise<T>, ms: number, what = 'answer'): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineError(`no ${what} within ${ms} ms`)), ms)
  })
  return Promise.race([p, deadline]).finally(() => clearTimeout(timer))
}

/** Polls fn until it returns a truthy value, which it returns; throws once ms have passed. */
export async function until<T>(fn: () => T | Promise<T>, ms: number, what: string, opts: UntilOptions = {}): Promise<Truthy<T>> {
  const everyMs = opts.everyMs ?? 50
  const t0 = Date.now()
  for (;;) {
    const left = ms - (Date.now() - t0)
    if (left <= 0) throw new Error(`timed out after ${ms} ms waiting for ${what}`)
    let value: T | null = null
    try {
      value = await within(Promise.resolve().then(fn), left, what)
    } catch (e) {
      if (opts.rethrow && !(e instanceof DeadlineError)) throw e
    }
    if (value) return value as Truthy<T>
    await Bun.sleep(Math.min(everyMs, Math.max(0, ms - (Date.now() - t0))))
  }
}
