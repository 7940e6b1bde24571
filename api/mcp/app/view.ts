// The report view's entry point, bundled into the ui:// resource (html.ts). It connects to the host with
// the package's App class (JSON-RPC over postMessage) and draws the tool result the host hands it. When
// the host can call server tools it also: asks again every few seconds (bounded) while a scan or an audit
// is still running, completes an audit's summary (get_audit's default answer: top findings without
// evidence or fix) with the findings and pages sections, a bounded number of pages each, and replaces a
// compact scan report (scan_app's and get_scan's default answer) with the whole one.
import { App, applyDocumentTheme, applyHostStyleVariables, type McpUiHostContext } from '@modelcontextprotocol/ext-apps'
import { auditFindingsOf, auditPagesOf, modelOf, payloadOf, type ViewModel } from './model.ts'
import { renderReport, renderStatus } from './render.ts'

const POLL_MS = 5_000
/** Ten minutes of polling at most; after that the person asks the agent again. */
const MAX_POLLS = 120
/** Per section: at most this many calls of at most 100 items. */
const MAX_SECTION_CALLS = 5

const root = document.getElementById('report')!
const app = new App({ name: 'App Audit report', version: '1' }, {})
let polls = 0
let timer: ReturnType<typeof setTimeout> | undefined
/** Bumped by every new result, so a slow fetch for an older one never draws over it. */
let generation = 0

const canCallTools = () => Boolean(app.getHostCapabilities()?.serverTools)

function applyContext(ctx: McpUiHostContext | undefined) {
  if (ctx?.theme) applyDocumentTheme(ctx.theme)
  if (ctx?.styles?.variables) applyHostStyleVariables(ctx.styles.variables)
}

function show(result: unknown) {
  clearTimeout(timer)
  const mine = ++generation
  const m = modelOf(result)
  if (!m) {
    renderStatus(root, 'This result is not a scan or audit report.', 'unknown')
    return
  }
  renderReport(root, m)
  if (m.kind === 'audit' && m.state === 'completed' && !m.findingsComplete && canCallTools()) void completeAudit(m, mine)
  else if (m.kind === 'scan' && m.state === 'completed' && m.id && isCompact(result) && canCallTools()) void completeScan(m.id, mine)
  else schedulePoll(m)
}

/** A compact scan report: scan_app's or get_scan's default answer, its evidence cut. */
function isCompact(result: unknown): boolean {
  const { payload } = payloadOf(result)
  const report =
    payload && typeof payload.report === 'object' && payload.report !== null ? (payload.report as Record<string, unknown>) : payload
  return report?.detail === 'compact'
}

/** The whole report of a completed scan, drawn over its compact form; the compact one stays on any failure. */
async function completeScan(scanId: string, mine: number) {
  try {
    const result = await app.callServerTool({ name: 'get_scan', arguments: { scanId, detail: 'full' } })
    const whole = modelOf(result)
    if (mine !== generation || payloadOf(result).isError || !whole) return
    renderReport(root, whole)
  } catch {
    // The host refused or the server is away: the compact report stays.
  }
}

function schedulePoll(m: ViewModel) {
  const running = m.state === 'queued' || m.state === 'running'
  if (!running || !m.id || polls >= MAX_POLLS || !canCallTools()) return
  const call =
    m.kind === 'audit'
      ? { name: 'get_audit', arguments: { auditId: m.id } }
      : { name: 'get_scan', arguments: { scanId: m.id, detail: 'full' } }
  timer = setTimeout(async () => {
    polls++
    try {
      show(await app.callServerTool(call))
    } catch {
      // The host refused or the server is away: keep what is shown; the agent can ask again.
    }
  }, POLL_MS)
}

/** Every item of one section of a completed audit, following nextCursor, bounded. */
async function sectionItems(auditId: string, section: 'findings' | 'pages'): Promise<unknown[] | null> {
  const items: unknown[] = []
  let cursor: string | undefined
  for (let i = 0; i < MAX_SECTION_CALLS; i++) {
    const args: Record<string, unknown> = { auditId, section, limit: 100, ...(cursor ? { cursor } : {}) }
    const { payload, isError } = payloadOf(await app.callServerTool({ name: 'get_audit', arguments: args }))
    if (isError || !payload || !Array.isArray(payload.items)) return i === 0 ? null : items
    items.push(...payload.items)
    if (typeof payload.nextCursor !== 'string' || !payload.items.length) break
    cursor = payload.nextCursor
  }
  return items
}

async function completeAudit(m: ViewModel, mine: number) {
  try {
    const [findings, pages] = await Promise.all([sectionItems(m.id, 'findings'), sectionItems(m.id, 'pages')])
    if (mine !== generation) return
    const full: ViewModel = { ...m }
    if (findings) Object.assign(full, { findings: auditFindingsOf(findings), findingsComplete: true })
    if (pages) full.pages = auditPagesOf(pages)
    renderReport(root, full)
  } catch {
    // The summary stays on screen.
  }
}

app.ontoolinput = (params) => {
  const url = params.arguments?.url
  renderStatus(root, typeof url === 'string' ? `Scanning ${url} …` : 'Waiting for the result …', 'waiting')
}
app.ontoolresult = (result) => show(result)
app.ontoolcancelled = (params) => {
  clearTimeout(timer)
  generation++
  renderStatus(root, `Cancelled${params.reason ? `: ${params.reason}` : '.'}`, 'cancelled')
}
app.onhostcontextchanged = (ctx) => applyContext(ctx)
app.onteardown = async () => {
  clearTimeout(timer)
  generation++
  return {}
}

app
  .connect()
  .then(() => applyContext(app.getHostContext()))
  .catch(() => renderStatus(root, 'Could not connect to the host.', 'disconnected'))
