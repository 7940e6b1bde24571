// Picks the infrastructure implementation from configuration: Redis when REDIS_URL is set.
import type { Config } from '../config.ts'
import type { Logger } from '../lib/log.ts'
import { createMemoryInfra } from './memory.ts'
import { createRedisInfra } from './redis.ts'
import type { Infra, QueueTuning } from './types.ts'

export function tuningFrom(config: Config): QueueTuning {
  return { claimIdleMs: config.JOB_CLAIM_IDLE_MS, heartbeatMs: Math.max(250, Math.floor(config.JOB_CLAIM_IDLE_MS / 4)) }
}

export async function openInfra(config: Config, log?: Logger): Promise<Infra> {
  return config.REDIS_URL
    ? createRedisInfra(config.REDIS_URL, tuningFrom(config), config.REDIS_PREFIX, log)
    : createMemoryInfra(tuningFrom(config))
}
