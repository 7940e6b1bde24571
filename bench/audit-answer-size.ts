// Size of get_audit's answers for large audits, and its time on a 500-page one. Reference: the whole stored
// result, which get_audit used to return (the audit's state with its full result), measured in the same run.
//
// The audits are stored through the crawler worker's own path (createAudit, claimAudit, storeAuditPage per
// page, buildAuditResult, completeAudit) from the checks of one real scan_app run on the weak fixture site,
// spread over 50 and 500 pages of a generated shop site (test/fixtures/large-audit.ts: page-specific
// findings, problems on some sections only, pages that fail to load). get_audit is called through the MCP
// SDK client against the service in production mode (PostgreSQL, Redis), and timed there too.
//
//   bun bench/audit-answer-size.ts            15 timed calls per measurement after 3 warm-up calls
//   bun bench/audit-answer-size.ts --quick    7 timed calls after 1 warm-up
//   options: --calls=N --warmup=N --result=FILE
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { loadavg } from 'node:os'
import { AuditService, auditView } from '../api/audits/service.ts'
import { readAuditSummary } from '../shared/db/audit-results.ts'
import { createAccount, createApiKey } from '../shared/db/accounts.ts'
import { getAudit } from '../shared/db/audits.ts'
import { generateAuditPages, storeCompletedAudit } from '../test/fixtures/large-audit.ts'
import { weakSite } from '../test/fixtures/sites.ts'
import { connectClient, textJson } from '../test/harness/client.ts'
import { startBenchService } from './lib/service.ts'
import { flag, fmtInt, fmtMs, intFlag, summarize, table, writeResult, type Summary } from './lib/stats.ts'

export const TARGET_BYTES = 16 * 1024
export const TARGET_MEDIAN_MS = 50
const SECTIONS = ['findings', 'pages', 'checks', 'thirdParties'] as const

export interface SizeRow {
  pages: number
  fullBytes: number
  defaultBytes: number
  sectionBytes: Record<(typeof SECTIONS)[number], number>
  findings: number
}

export interface AuditAnswerResult {
  bench: 'audit-answer-size'
  sizes: SizeRow[]
  /**
   * get_audit's default answer on the 500-page audit: the first call (its summary read from the database),
   * then repeated calls through the MCP client and as the service call alone (the summary of a completed
   * result is kept in memory), and the database read the first call makes, repeated (uncached).
   */
  timing: { pages: number; firstCallMs: number; mcp: Summary; service: Summary; summaryRead: Summary }
  targetBytes: number
  targetMedianMs: number
}

const quick = flag('quick') === true
const calls = intFlag('calls', quick ? 7 : 15, 1, 1000)
const warmup = intFlag('warmup', quick ? 1 : 3, 0, 100)

/** The text of a tool's answer, as a client receives it (content[0].text), its size in bytes and its JSON. */
async function answer(client: Client, args: Record<string, unknown>): Promise<{ bytes: number; body: any }> {
  const r = await client.callTool({ name: 'get_audit', arguments: args }, undefined, { timeout: 60_000 })
  const text = (r.content as Array<{ type: string; text?: string }>)[0]?.text ?? ''
  if (r.isError) throw new Error(`get_audit ${JSON.stringify(args)} failed: ${text}`)
  return { bytes: Buffer.byteLength(text, 'utf8'), body: textJson(text) }
}

async function timed(n: number, warm: number, f: () => Promise<unknown>): Promise<Summary> {
  for (let i = 0; i < warm; i++) await f()
  const samples: number[] = []
  for (let i = 0; i < n; i++) {
    const t0 = performance.now()
    await f()
    samples.push(performance.now() - t0)
  }
  return summarize(samples)
}

const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`

// A scan on a busy machine can take longer than the harness's default wait.
const svc = await startBenchService('production', { SCAN_TIMEOUT_MS: '90000' })
const site = await weakSite()
let client: Client | undefined
try {
  const sql = svc.running.services.db.sql
  const account = await createAccount(sql, 'scale')
  client = await connectClient(svc.mcpUrl, (await createApiKey(sql, account.id)).plaintext)
  const scan = await client.callTool({ name: 'scan_app', arguments: { url: site.url, detail: 'full' } }, undefined, { timeout: 120_000 })
  if (scan.isError) throw new Error(`scan_app failed: ${JSON.stringify(scan.content)}`)
  const report = textJson((scan.content as Array<{ text: string }>)[0]!.text)

  const sizes: SizeRow[] = []
  const ids = new Map<number, string>()
  for (const pages of [50, 500]) {
    const { auditId, result } = await storeCompletedAudit(sql, account.id, generateAuditPages(report.checks, report.url, pages))
    ids.set(pages, auditId)
    const row = await getAudit(sql, account.id, auditId)
    const fullBytes = Buffer.byteLength(JSON.stringify(auditView(row!)), 'utf8')
    const summary = await answer(client, { auditId })
    const sectionBytes = {} as SizeRow['sectionBytes']
    for (const section of SECTIONS) sectionBytes[section] = (await answer(client, { auditId, section })).bytes
    sizes.push({ pages, fullBytes, defaultBytes: summary.bytes, sectionBytes, findings: result.findings.length })
  }

  const big = ids.get(500)!
  // A fresh service process for the first call: the sizes above already read this audit's summary once.
  const principal = { account: { ...account } } as Parameters<typeof svc.running.services.audits.get>[0]
  const fresh = new AuditService({
    config: svc.running.services.config,
    db: svc.running.services.db,
    infra: svc.running.services.infra,
    log: svc.running.services.log,
  })
  const t0 = performance.now()
  await fresh.get(principal, big)
  const firstCallMs = performance.now() - t0
  const mcp = await timed(calls, warmup, () => answer(client!, { auditId: big }))
  const service = await timed(calls, warmup, () => svc.running.services.audits.get(principal, big))
  const summaryRead = await timed(calls, warmup, () => readAuditSummary(sql, account.id, big, 10, { useStored: true }))

  console.log(`get_audit answer sizes (bytes of content[0].text; sections: first page at the default limit)\n`)
  const rows = [
    [
      'pages',
      'findings',
      'full result (before)',
      'default answer',
      'findings p1',
      'pages p1',
      'checks p1',
      'thirdParties p1',
      `default < ${kb(TARGET_BYTES)}`,
    ],
  ]
  for (const s of sizes) {
    rows.push([
      String(s.pages),
      fmtInt(s.findings),
      `${fmtInt(s.fullBytes)} (${kb(s.fullBytes)})`,
      `${fmtInt(s.defaultBytes)} (${kb(s.defaultBytes)})`,
      fmtInt(s.sectionBytes.findings),
      fmtInt(s.sectionBytes.pages),
      fmtInt(s.sectionBytes.checks),
      fmtInt(s.sectionBytes.thirdParties),
      s.defaultBytes < TARGET_BYTES ? 'met' : 'NOT met',
    ])
  }
  console.log(table(rows))
  console.log(
    `\nget_audit default answer on the 500-page audit, ${calls} calls after ${warmup} warm-up (load average ${loadavg()[0]!.toFixed(2)})\n`,
  )
  console.log(
    table([
      ['path', 'min', 'median', 'p90', 'max', `median < ${TARGET_MEDIAN_MS} ms`],
      ...(
        [
          ['MCP client -> service (completed: summary in memory)', mcp],
          ['AuditService.get only', service],
          ['summary read from PostgreSQL (uncached)', summaryRead],
        ] as const
      ).map(([name, s]) => [
        name,
        fmtMs(s.min),
        fmtMs(s.median),
        fmtMs(s.p90),
        fmtMs(s.max),
        s.median < TARGET_MEDIAN_MS ? 'met' : 'NOT met',
      ]),
    ]),
  )
  console.log(`\nfirst call (summary read from PostgreSQL): ${fmtMs(firstCallMs)}`)
  console.log(
    `median_ms_500_pages_mcp=${mcp.median.toFixed(1)} median_ms_500_pages_service=${service.median.toFixed(1)} ` +
      `median_ms_500_pages_summary_read=${summaryRead.median.toFixed(1)} first_call_ms=${firstCallMs.toFixed(1)}`,
  )
  await writeResult({
    bench: 'audit-answer-size',
    sizes,
    timing: { pages: 500, firstCallMs, mcp, service, summaryRead },
    targetBytes: TARGET_BYTES,
    targetMedianMs: TARGET_MEDIAN_MS,
  } satisfies AuditAnswerResult)
} finally {
  await client?.close().catch(() => {})
  await site.stop()
  await svc.stop()
}
process.exit(0)
