// The export store: one stored body per (account, report, format, version), handed out again under new
// tokens while it has time left; a per-account quota on the bytes stored each hour.
import { describe, expect, test } from 'bun:test'
import { ExportStore, type ExportIdentity } from '../../../api/exports/service.ts'
import { AppError } from '../../../shared/errors.ts'
import { createMemoryInfra } from '../../../shared/infra/memory.ts'
import type { KeyValue } from '../../../shared/infra/types.ts'

/** The memory store, counting the bytes every set() writes. */
function countingKv(): { kv: KeyValue; written: () => number } {
  const inner = createMemoryInfra({ claimIdleMs: 60_000, heartbeatMs: 10_000 }).kv
  let written = 0
  const kv = Object.create(inner) as KeyValue
  kv.set = async (key, value, ttl) => {
    written += value.length
    return inner.set(key, value, ttl)
  }
  return { kv, written: () => written }
}

const identity = (over: Partial<ExportIdentity> = {}): ExportIdentity => ({
  accountId: 'acc_a',
  reportId: 'aud_1',
  format: 'html',
  version: '1.0.0',
  ...over,
})
const body = (kb: number) => ({ mediaType: 'text/html; charset=utf-8', filename: 'appaudit-aud_1.html', content: 'x'.repeat(kb * 1024) })
const LIMITS = { ttlSeconds: 3_600, reuseSeconds: 600, bytesPerHour: 1024 * 1024 }

describe('ExportStore', () => {
  test('the same export asked for again is a new link to the body already stored, not a second copy', async () => {
    let now = Date.parse('2026-11-28T10:00:00Z')
    const { kv, written } = countingKv()
    const store = new ExportStore(kv, () => now, LIMITS)
    expect(await store.reuse(identity())).toBeNull()
    const first = await store.put(identity(), body(300))
    const afterFirst = written()
    now += 30 * 60_000
    const links = []
    for (let i = 0; i < 100; i++) links.push(await store.reuse(identity()))
    // 100 more links cost their token records only (about 150 bytes each), not 100 bodies of 300 KB.
    expect(written() - afterFirst).toBeLessThan(100 * 300)
    expect(new Set(links.map((l) => l!.token)).size).toBe(100)
    expect(links.every((l) => l!.expiresAt === first.expiresAt && l!.bytes === 300 * 1024)).toBe(true)
    expect((await store.get(links[99]!.token))!.content).toHaveLength(300 * 1024)
    expect((await store.get(first.token))!.filename).toBe('appaudit-aud_1.html')
  })

  test('another format, report, version or account is another body; a body close to its end is built anew', async () => {
    let now = Date.parse('2026-11-28T10:00:00Z')
    const store = new ExportStore(countingKv().kv, () => now, LIMITS)
    await store.put(identity(), body(1))
    for (const other of [{ format: 'sarif' }, { reportId: 'aud_2' }, { version: '1.0.1' }, { accountId: 'acc_b' }])
      expect(await store.reuse(identity(other))).toBeNull()
    now += 51 * 60_000 // 9 minutes left: under reuseSeconds
    expect(await store.reuse(identity())).toBeNull()
  })

  test("an account's hour of exports is capped in bytes: the refused one stores nothing, others still store", async () => {
    const now = Date.parse('2026-11-28T10:00:00Z')
    const { kv, written } = countingKv()
    const store = new ExportStore(kv, () => now, LIMITS)
    for (let i = 0; i < 3; i++) await store.put(identity({ reportId: `aud_${i}` }), body(300))
    const before = written()
    const refused = await store.put(identity({ reportId: 'aud_9' }), body(300)).then(
      () => null,
      (e: unknown) => e,
    )
    expect(refused).toBeInstanceOf(AppError)
    expect((refused as AppError).code).toBe('rate_limited')
    expect((refused as AppError).message).toContain('links already given keep working')
    expect((refused as AppError).details.retryAfter).toBe(3_600)
    expect(written()).toBe(before)
    // The refusal took its bytes back: a small export still fits, and another account is not affected.
    await store.put(identity({ reportId: 'aud_small' }), body(100))
    await store.put(identity({ accountId: 'acc_b' }), body(300))
  })

  test('malformed, unknown and expired tokens are all null', async () => {
    let now = Date.parse('2026-11-28T10:00:00Z')
    const store = new ExportStore(countingKv().kv, () => now, LIMITS)
    const { token } = await store.put(identity(), body(1))
    for (const t of ['nope', 'A'.repeat(43), `${token}x`]) expect(await store.get(t)).toBeNull()
    now += 3_601_000
    expect(await store.reuse(identity())).toBeNull()
  })
})
