// Our side of a comparison: the real service booted by the test harness (api and crawler workers in this
// process), spoken to through the official MCP SDK client, exactly as the end-to-end tests do.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { connectClient, payload } from '../../test/harness/client.ts'
import { startService, type Mode, type TestService } from '../../test/harness/service.ts'
import { withTimeout } from '../lib/stats.ts'

export const SCAN_TIMEOUT_MS = 60_000

export interface OurCheck {
  id: string
  status: string
  severity: string
  summary: string
  evidence: Record<string, unknown>
}

export interface OurReport {
  score: number
  grade: string
  finalUrl?: string
  checks: OurCheck[]
  timings?: Record<string, number>
  /** The probe requests the scan states it made, against their budgets. */
  probes?: { budget: number; sent: number; api?: Record<string, number>; apps?: { sent: number; wordpress?: number; basePath?: number } }
}

export interface Ours {
  mode: Mode
  scan(url: string): Promise<{ ms: number; report: OurReport }>
  stop(): Promise<void>
}

/** Boots the service (trusting the given certificate SPKI hashes, as the e2e tests do) and connects one client. */
export async function startOurs(mode: Mode, trustedSpki: string[] = []): Promise<Ours> {
  const svc: TestService = await startService(mode, trustedSpki.length ? { TRUSTED_CERT_SPKI: trustedSpki.join(',') } : {})
  let client: Client
  try {
    client = await connectClient(svc.mcpUrl, await svc.key('free'))
  } catch (e) {
    await svc.stop()
    throw e
  }
  return {
    mode,
    async scan(url: string) {
      const t0 = performance.now()
      const r = await withTimeout(
        client.callTool({ name: 'scan_app', arguments: { url } }, undefined, { timeout: SCAN_TIMEOUT_MS }),
        SCAN_TIMEOUT_MS + 5_000,
        `scan_app ${url}`,
      )
      const ms = performance.now() - t0
      const body = payload(r)
      if (r.isError) throw new Error(`scan_app ${url} failed: ${JSON.stringify(body.error ?? body).slice(0, 500)}`)
      // scan_app's answer is cut to an agent's budget (evidence shortened): comparisons read the whole report.
      if (body.detail !== 'compact' || typeof body.id !== 'string') return { ms, report: body as OurReport }
      const full = await withTimeout(
        client.callTool({ name: 'get_scan', arguments: { scanId: body.id, detail: 'full' } }, undefined, { timeout: SCAN_TIMEOUT_MS }),
        SCAN_TIMEOUT_MS + 5_000,
        `get_scan ${body.id}`,
      )
      if (full.isError) throw new Error(`get_scan ${body.id} failed: ${JSON.stringify(payload(full)).slice(0, 500)}`)
      const whole = payload(full)
      return { ms, report: (whole.report ?? whole) as OurReport }
    },
    async stop() {
      await client.close().catch(() => {})
      await svc.stop()
    },
  }
}
