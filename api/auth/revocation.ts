// Revoking a credential must take effect at once, but BearerAuth caches verified credentials for 5 s
// per process. A revocation therefore clears this process's cache and announces itself on pub/sub, so
// every other replica clears its cache too. Should the announcement be lost (Redis down), the cache
// still expires within 5 s: that is the bound for other replicas.
import type { Logger } from '../../shared/lib/log.ts'
import type { PubSub } from '../../shared/infra/types.ts'
import type { BearerAuth } from './bearer.ts'
import { errorMessage } from '../../shared/errors.ts'

const CHANNEL = 'auth:revoked'

export class Revocations {
  constructor(
    private pubsub: PubSub,
    private bearer: BearerAuth,
    private log: Logger,
  ) {}

  /** Listens for other replicas' revocations; resolves once subscribed. */
  async listen(): Promise<() => Promise<void>> {
    return this.pubsub.subscribe(CHANNEL, () => this.bearer.forgetAll())
  }

  announce(): void {
    this.bearer.forgetAll()
    this.pubsub
      .publish(CHANNEL, String(Date.now()))
      .catch((e) => this.log.warn('revocation announcement failed', { error: errorMessage(e) }))
  }
}
