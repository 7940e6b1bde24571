// The soak's faults: every 30-90 s one of a crawler or an api killed (SIGKILL or SIGTERM) and started
// again, the soak's Redis restarted empty, or its PostgreSQL paused for a few seconds. Each fault is
// logged with when it began and when what it broke was back, so latencies can be read outside the faults.
// A supervisor starts again any slot whose process ended, whoever ended it (as an orchestrator would).
import { errorMessage } from '../../shared/errors.ts'
import { isUp, type ProcEnv, type Slot, signalSlot, startSlot } from './procs.ts'
import type { SoakStores } from './stores.ts'

export interface Fault {
  at: number
  /** When what the fault broke was back (the process ready again, Redis answering, PostgreSQL resumed). */
  back: number
  what: string
  /** How long the stop took (a SIGTERM's graceful exit), or the pause. */
  detail: string
}

const rand = (a: number, b: number) => a + Math.random() * (b - a)
const pick = <T>(xs: T[]): T => xs[Math.floor(Math.random() * xs.length)]!

export class Supervisor {
  private starting = new Map<Slot, Promise<void>>()
  restarts: Array<{ slot: string; at: number; error?: string }> = []

  constructor(
    readonly slots: Slot[],
    private pe: ProcEnv,
    private readyMs: number,
  ) {}

  /** Starts the slot unless it is up or starting; resolves when it is up (or its start failed). */
  ensureUp(slot: Slot): Promise<void> {
    if (isUp(slot)) return Promise.resolve()
    let p = this.starting.get(slot)
    if (!p) {
      p = startSlot(slot, this.pe, this.readyMs)
        .catch((e) => {
          this.restarts.push({ slot: slot.name, at: Date.now(), error: errorMessage(e) })
          // A start that hung: end it, so the next round starts it again.
          return signalSlot(slot, 'SIGKILL').then(() => {})
        })
        .finally(() => this.starting.delete(slot))
      this.starting.set(slot, p)
    }
    return p
  }

  /** Every 2 s until `until`: any slot that is not up and not starting is started. */
  async run(until: () => boolean): Promise<void> {
    for (let i = 0; i < 100_000 && !until(); i++) {
      for (const s of this.slots) if (!isUp(s) && !this.starting.has(s)) void this.ensureUp(s)
      await Bun.sleep(2_000)
    }
  }
}

async function killAndRestart(sup: Supervisor, role: 'api' | 'crawler', sig: 'SIGKILL' | 'SIGTERM'): Promise<Omit<Fault, 'at' | 'back'>> {
  const slot = pick(sup.slots.filter((s) => s.role === role && isUp(s)))
  if (!slot) return { what: `${role} ${sig}`, detail: 'none up; skipped' }
  const stopMs = await signalSlot(slot, sig)
  await sup.ensureUp(slot)
  return { what: `${slot.name} ${sig}`, detail: `exit after ${stopMs} ms` }
}

/** One fault, chosen at random, and its recovery. */
export async function oneFault(sup: Supervisor, stores: SoakStores): Promise<Fault> {
  const at = Date.now()
  const kind = Math.floor(Math.random() * 6)
  let f: Omit<Fault, 'at' | 'back'>
  if (kind === 0) f = await killAndRestart(sup, 'crawler', 'SIGKILL')
  else if (kind === 1) f = await killAndRestart(sup, 'crawler', 'SIGTERM')
  else if (kind === 2) f = await killAndRestart(sup, 'api', 'SIGKILL')
  else if (kind === 3) f = await killAndRestart(sup, 'api', 'SIGTERM')
  else if (kind === 4) {
    const down = Math.round(rand(1_000, 3_000))
    await stores.redis.restart(down)
    f = { what: 'redis restart (SIGKILL, empty)', detail: `down ${down} ms` }
  } else {
    const ms = Math.round(rand(2_000, 6_000))
    await stores.pg.pause(ms)
    f = { what: 'postgres paused (SIGSTOP)', detail: `${ms} ms` }
  }
  return { at, back: Date.now(), ...f }
}

/** Faults every gapMs (30-90 s by default) until `until`; no fault starts after it. */
export async function chaosLoop(
  sup: Supervisor,
  stores: SoakStores,
  until: number,
  faults: Fault[],
  say: (s: string) => void,
  gapMs: [number, number] = [30_000, 90_000],
) {
  for (let i = 0; i < 10_000; i++) {
    const gap = rand(...gapMs)
    if (Date.now() + gap >= until) break
    await Bun.sleep(gap)
    const f = await oneFault(sup, stores).catch((e) => ({
      at: Date.now(),
      back: Date.now(),
      what: 'fault failed',
      detail: errorMessage(e),
    }))
    faults.push(f)
    say(`fault ${faults.length}: ${f.what} (${f.detail}); back after ${((f.back - f.at) / 1000).toFixed(1)} s`)
  }
}
