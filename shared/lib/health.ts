// Liveness and readiness, the same on every process (api, crawler, both): /healthz answers while the process
// runs its event loop (a restart helps only when it does not); /readyz answers 200 only when what the process
// needs answers now: the database, the key-value store and queue (Redis in production), and for a crawler a
// browser that starts. Each probe has a deadline, so a hung dependency reads as not ready, never as a hang.
// While the process stops (SIGTERM), /readyz answers 503 at once, so a load balancer sends it nothing new.
import { DeadlineExceeded, withDeadline } from './async.ts'
import { errorMessage } from '../errors.ts'

export interface Probe {
  name: string
  check(): Promise<unknown>
}

export interface Readiness {
  ready: boolean
  /** Each probe's outcome: "ok", or why it failed. */
  checks: Record<string, string>
}

/** Longest a probe may take before it counts as failed. */
export const PROBE_DEADLINE_MS = 3_000

export async function readiness(probes: Probe[], stopping: () => boolean): Promise<Readiness> {
  if (stopping()) return { ready: false, checks: { process: 'stopping' } }
  const results = await Promise.all(
    probes.map(async (p) => {
      try {
        await withDeadline(p.check(), PROBE_DEADLINE_MS, p.name)
        return [p.name, 'ok'] as const
      } catch (e) {
        if (e instanceof DeadlineExceeded) return [p.name, `no answer within ${PROBE_DEADLINE_MS} ms`] as const
        return [p.name, errorMessage(e).split('\n')[0]!.slice(0, 200)] as const
      }
    }),
  )
  return { ready: results.every(([, r]) => r === 'ok'), checks: Object.fromEntries(results) }
}

/**
 * The answer to /healthz or /readyz (null for any other path). The answer names each check and says ok or
 * failed, never why: an error can name internal hosts and users, and /readyz is public on an api. Why goes
 * to `onNotReady` (the log).
 */
export function healthResponse(
  path: string,
  state: () => Promise<Readiness>,
  info: Record<string, unknown>,
  onNotReady: (checks: Record<string, string>) => void = () => {},
): Promise<Response> | Response | null {
  const json = (status: number, body: unknown) =>
    new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', 'cache-control': 'no-store' } })
  if (path === '/healthz') return json(200, { ok: true, ...info })
  if (path === '/readyz')
    return state().then((r) => {
      if (!r.ready) onNotReady(r.checks)
      const checks = Object.fromEntries(Object.entries(r.checks).map(([k, v]) => [k, v === 'ok' || v === 'stopping' ? v : 'failed']))
      return json(r.ready ? 200 : 503, { ready: r.ready, checks, ...info })
    })
  return null
}
