// Slots for the jobs that talk to a repository host (clone, push, pull request): a few at once per
// process, and at most `perKey` of them for one account, so a slow or hostile host that one account
// connected holds that account's slots only, never another account's turn. A job waits in its account's
// line; when a slot frees, the oldest waiting job of an account that is under its share goes next.

export class JobSlots {
  private running = 0
  private readonly byKey = new Map<string, number>()
  private readonly waiting: Array<{ key: string; go: () => void }> = []

  constructor(
    private readonly total: number,
    private readonly perKey: number,
  ) {}

  /** Runs `job` when a slot is free for `key`. */
  async run<T>(key: string, job: () => Promise<T>): Promise<T> {
    if (!this.free(key)) await new Promise<void>((go) => this.waiting.push({ key, go }))
    this.running++
    this.byKey.set(key, (this.byKey.get(key) ?? 0) + 1)
    try {
      return await job()
    } finally {
      this.running--
      const left = (this.byKey.get(key) ?? 1) - 1
      if (left > 0) this.byKey.set(key, left)
      else this.byKey.delete(key)
      this.next()
    }
  }

  /** Jobs running and waiting, for tests and logs. */
  get counts(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length }
  }

  private free(key: string): boolean {
    return this.running < this.total && (this.byKey.get(key) ?? 0) < this.perKey
  }

  private next(): void {
    const i = this.waiting.findIndex((w) => this.free(w.key))
    if (i < 0) return
    const [w] = this.waiting.splice(i, 1)
    w!.go()
  }
}
