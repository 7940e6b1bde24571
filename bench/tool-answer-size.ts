// The size of every MCP tool's answer as the official SDK client receives it, on a careless page (many failing
// checks with large evidence) and a careful one (test/fixtures/careless-page.ts): the bytes of the text content,
// of the structuredContent JSON, and of both together, which is what a client that hands the model either copy
// may pass on. Claude Code saves a tool result over 50,000 characters to a file and refuses one over 25,000
// tokens; every byte of an answer is context the agent pays for. The service runs in-process on its embedded
// default (PGlite, in-process queue), as a first run does.
//
//   bun bench/tool-answer-size.ts            every tool, audits included
//   bun bench/tool-answer-size.ts --quick    the same (one call per tool either way)
//   options: --result=FILE
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { carefulPage, carelessPage } from '../test/fixtures/careless-page.ts'
import type { Site } from '../test/fixtures/sites.ts'
import { connectClient, textJson } from '../test/harness/client.ts'
import { startBenchService } from './lib/service.ts'
import { fmtInt, table, writeResult } from './lib/stats.ts'

/** The targets on the careless page (issue 25): structuredContent and both copies, in bytes. */
// scan_app/get_scan: 12 KB and 24 KB (issue 25), with 51 checks.
export const TARGETS = { scanStructured: 12 * 1024, scanBoth: 24 * 1024, fixBrief: 16 * 1024, findingsTokens: 25_000 }

export interface AnswerSize {
  tool: string
  page: 'careless' | 'careful'
  text: number
  structured: number
  both: number
  isError: boolean
}

export interface ToolAnswerSizeResult {
  bench: 'tool-answer-size'
  sizes: AnswerSize[]
  targets: typeof TARGETS
}

type Args = Record<string, unknown>
const bytes = (s: string) => Buffer.byteLength(s, 'utf8')

/** One call and what the client received: the text blocks, the structuredContent JSON, and the parsed payload. */
async function measure(client: Client, tool: string, args: Args): Promise<{ size: Omit<AnswerSize, 'page'>; body: any }> {
  const r = await client.callTool({ name: tool, arguments: args }, undefined, { timeout: 180_000 })
  const texts = (r.content as Array<{ type: string; text?: string }>).filter((b) => b.type === 'text').map((b) => b.text ?? '')
  const text = texts.reduce((n, t) => n + bytes(t), 0)
  const structured = r.structuredContent === undefined ? 0 : bytes(JSON.stringify(r.structuredContent))
  const first = texts[0] ?? ''
  const body = r.structuredContent ?? textJson(first)
  return { size: { tool, text, structured, both: text + structured, isError: r.isError === true }, body }
}

async function untilEnded(client: Client, auditId: string, ms: number): Promise<void> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    const r = await client.callTool({ name: 'get_audit', arguments: { auditId } })
    const s = (r.structuredContent as { status?: string } | undefined)?.status
    if (s === 'completed' || s === 'failed' || s === 'cancelled') return
    await Bun.sleep(1_000)
  }
}

/** Every tool on one page, in the order tools/list shows them, plus the variants that ask for more. */
async function measurePage(client: Client, page: AnswerSize['page'], url: string) {
  const sizes: AnswerSize[] = []
  const run = async (tool: string, args: Args, label = tool) => {
    const { size, body } = await measure(client, tool, args)
    if (size.isError) console.error(`${label} on the ${page} page answered an error: ${JSON.stringify(body).slice(0, 300)}`)
    sizes.push({ ...size, tool: label, page })
    return body
  }
  const scan = await run('scan_app', { url })
  const scanId: string = scan.id ?? scan.scanId
  const audit = await run('audit_app', { url, options: { maxPages: 2, maxDepth: 1, maxDurationSeconds: 60 } })
  await untilEnded(client, audit.auditId, 120_000)
  await run('get_audit', { auditId: audit.auditId })
  await run('get_scan', { scanId })
  await run('get_scan', { scanId, detail: 'full' }, 'get_scan detail:"full"')
  await run('get_findings', { scanId })
  await run(
    'get_findings',
    { scanId, status: ['pass', 'fail', 'warn', 'info', 'skipped', 'error'], limit: 100 },
    'get_findings every check',
  )
  await run('get_fix_brief', { scanId })
  await run('get_fix_brief', { auditId: audit.auditId }, 'get_fix_brief (audit)')
  await run('list_apps', {})
  await run('scan_history', { url })
  await run('explain_check', { checkId: 'csp' })
  await run('check_data_exposure', { url })
  await run('verify_site', { url })
  await run('get_account', {})
  const again = await run('scan_app', { url }, 'scan_app (again)')
  await run('compare_scans', { baseScanId: scanId, headScanId: again.id })
  await run('export_report', { scanId, format: 'sarif' })
  await run('monitor_app', { url, schedule: 'daily' })
  await run('create_patch', { scanId })
  await run('start_directory_run', { urls: [url] })
  await run('audit_authenticated', { url, headers: { authorization: 'Bearer bench' }, options: { maxPages: 1, maxDurationSeconds: 30 } })
  return { sizes }
}

const careless: Site = carelessPage()
const careful = await carefulPage()
const svc = await startBenchService('embedded', { TRUSTED_CERT_SPKI: careful.spki, SECRETS_KEY: Buffer.alloc(32, 7).toString('base64') })
let client: Client | undefined
try {
  client = await connectClient(svc.mcpUrl, await svc.key('scale'))
  await client.listTools()
  const calm = await measurePage(client, 'careful', careful.url)
  const wild = await measurePage(client, 'careless', careless.url)
  const sizes = [...wild.sizes, ...calm.sizes]

  const rows = [['tool', 'careless: text', 'structured', 'both', 'careful: text', 'structured', 'both']]
  const cell = (s: AnswerSize | undefined, k: 'text' | 'structured' | 'both') => (s ? `${fmtInt(s[k])}${s.isError ? ' (error)' : ''}` : '')
  for (const w of wild.sizes) {
    const c = calm.sizes.find((s) => s.tool === w.tool)
    rows.push([w.tool, cell(w, 'text'), cell(w, 'structured'), cell(w, 'both'), cell(c, 'text'), cell(c, 'structured'), cell(c, 'both')])
  }
  console.log('Bytes of each tool answer as the MCP SDK client receives it: text content, structuredContent JSON, both\n')
  console.log(table(rows))
  const of = (tool: string) => wild.sizes.find((s) => s.tool === tool)!
  const verdicts = [
    ['scan_app structured', of('scan_app').structured, TARGETS.scanStructured],
    ['scan_app both', of('scan_app').both, TARGETS.scanBoth],
    ['get_scan structured', of('get_scan').structured, TARGETS.scanStructured],
    ['get_scan both', of('get_scan').both, TARGETS.scanBoth],
    ['get_fix_brief structured', of('get_fix_brief').structured, TARGETS.fixBrief],
    // About 4 bytes a token for JSON of English text; the larger copy is what one client passes on.
    [
      'get_findings tokens (~bytes/4)',
      Math.ceil(Math.max(of('get_findings').text, of('get_findings').structured) / 4),
      TARGETS.findingsTokens,
    ],
  ] as const
  console.log('\nTargets on the careless page\n')
  console.log(
    table([
      ['answer', 'measured', 'target', 'status'],
      ...verdicts.map(([name, n, t]) => [name, fmtInt(n), `<= ${fmtInt(t)}`, n <= t ? 'met' : 'NOT met']),
    ]),
  )
  await writeResult({ bench: 'tool-answer-size', sizes, targets: TARGETS } satisfies ToolAnswerSizeResult)
} finally {
  await client?.close().catch(() => {})
  await careless.stop()
  await careful.stop()
  await svc.stop()
}
process.exit(0)
