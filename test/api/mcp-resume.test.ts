// Resumable streams: a client that loses the connection during a long scan_app resumes it with
// Last-Event-ID on another api process and gets the rest of its progress and its result.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { boot, type Running } from '../../server/boot.ts'
import { createLogger } from '../../shared/lib/log.ts'
import { startAuditSite, type AuditSite } from '../fixtures/audit-site.ts'
import { MCP_HEADERS } from '../harness/client.ts'
import { startService, type TestService } from '../harness/service.ts'
import { within } from '../harness/wait.ts'
import { machineDeadline } from '../harness/machine.ts'

let first: TestService
let second: Running
let secondUrl: string
let site: AuditSite
let key: string

beforeAll(async () => {
  // The first process runs the api and the crawler; the second is another api replica on the same stores.
  first = await startService('production')
  const config = first.running.services.config
  second = await boot({ ...config, ROLE: 'api', PORT: 0 }, createLogger('error'))
  secondUrl = `http://127.0.0.1:${second.port}/api/mcp`
  site = startAuditSite({ pages: 1, delayMs: 1_500 })
  key = await first.key()
}, machineDeadline(60_000))
afterAll(async () => {
  await second?.stop()
  await first?.stop()
  await site?.stop()
})

interface SseEvent {
  id: string | null
  data: unknown
}

/** Reads SSE events from a response body until `stop` says so or the stream ends, within a deadline. */
async function readEvents(res: Response, stop: (events: SseEvent[]) => boolean, ms = 30_000): Promise<SseEvent[]> {
  const reader = res.body!.getReader()
  const decoder = new TextDecoder()
  const events: SseEvent[] = []
  let buffer = ''
  const deadline = Date.now() + ms
  while (Date.now() < deadline && !stop(events)) {
    const { value, done } = await within(reader.read(), Math.max(1, deadline - Date.now()), 'an SSE event')
    if (done) break
    buffer += decoder.decode(value, { stream: true })
    let end = buffer.indexOf('\n\n')
    while (end >= 0) {
      const block = buffer.slice(0, end)
      buffer = buffer.slice(end + 2)
      end = buffer.indexOf('\n\n')
      const id = /^id: (.*)$/m.exec(block)?.[1] ?? null
      const data = /^data: (.+)$/m.exec(block)?.[1]
      if (data) events.push({ id, data: JSON.parse(data) })
    }
  }
  await reader.cancel().catch(() => {})
  return events
}

const isAnswer = (e: SseEvent) => typeof e.data === 'object' && e.data !== null && 'result' in (e.data as object)

/** A tools/call with a progress token, so its answer is an SSE stream whose events carry ids. */
const callStreaming = (id: number, name: string, args: Record<string, unknown>, signal: AbortSignal) =>
  fetch(first.mcpUrl, {
    method: 'POST',
    headers: { ...MCP_HEADERS, authorization: `Bearer ${key}` },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name, arguments: args, _meta: { progressToken: `p${id}` } },
    }),
    signal,
  })

const resumeOn = (url: string, lastEventId: string, credential = key) =>
  fetch(url, { headers: { authorization: `Bearer ${credential}`, accept: 'text/event-stream', 'last-event-id': lastEventId } })

describe('GET with Last-Event-ID', () => {
  test('a scan_app whose connection dropped after its first progress event is finished on another api process', async () => {
    const ctrl = new AbortController()
    const res = await callStreaming(41, 'scan_app', { url: site.url }, ctrl.signal)
    expect(res.headers.get('content-type')).toContain('text/event-stream')
    const before = await readEvents(res, (ev) => ev.some((e) => e.id !== null))
    ctrl.abort()
    const last = before.findLast((e) => e.id !== null)!
    expect(isAnswer(last)).toBe(false)

    const resumed = await resumeOn(secondUrl, last.id!)
    expect(resumed.status).toBe(200)
    expect(resumed.headers.get('content-type')).toContain('text/event-stream')
    // One reader per stream at a time, on any replica: the scan is still running, so the first one is open.
    expect((await resumeOn(first.mcpUrl, last.id!)).status).toBe(409)
    const after = await readEvents(resumed, (ev) => ev.some(isAnswer), 60_000)
    const answer = after.find(isAnswer)!.data as { id: number; result: { content: Array<{ text: string }> } }
    expect(answer.id).toBe(41)
    const report = JSON.parse(answer.result.content[0]!.text)
    expect(typeof report.score).toBe('number')
    // Nothing already delivered comes again, and progress kept increasing.
    const ids = new Set(before.map((e) => e.id))
    expect(after.every((e) => !ids.has(e.id))).toBe(true)
    const progress = [...before, ...after]
      .map((e) => (e.data as { params?: { progress?: number } }).params?.progress)
      .filter((p): p is number => typeof p === 'number')
    expect(progress).toEqual([...progress].sort((a, b) => a - b))
  }, 90_000)

  test('only long tools are kept for resuming: a quick tool streams without event ids', async () => {
    const res = await callStreaming(6, 'get_account', {}, new AbortController().signal)
    const events = await readEvents(res, (ev) => ev.some(isAnswer))
    expect(events.some(isAnswer)).toBe(true)
    expect(events.every((e) => e.id === null)).toBe(true)
  })

  test("another account's key, an unknown, made-up or malformed id get 404; a wrong Accept 406", async () => {
    const res = await callStreaming(5, 'scan_app', { url: site.url }, new AbortController().signal)
    const events = await readEvents(res, (ev) => ev.some(isAnswer), 60_000)
    const id = events.find((e) => e.id !== null)!.id!
    expect((await resumeOn(secondUrl, id, await first.key())).status).toBe(404)
    expect((await resumeOn(secondUrl, '00000000-0000-0000-0000-000000000000.1-0')).status).toBe(404)
    expect((await resumeOn(secondUrl, 'not-an-event-id')).status).toBe(404)
    // An entry id that is not in this stream's log opens nothing that would wait on nothing.
    expect((await resumeOn(secondUrl, `${id.split('.')[0]}.99999999999999-0`)).status).toBe(404)
    const wrongAccept = await fetch(secondUrl, {
      headers: { authorization: `Bearer ${key}`, accept: 'application/json', 'last-event-id': id },
    })
    expect(wrongAccept.status).toBe(406)
    // The owner resuming after the answer gets nothing more to read: the stream ends at once.
    const done = await resumeOn(secondUrl, events.find(isAnswer)!.id!)
    expect(done.status).toBe(200)
    expect(await readEvents(done, () => false, 5_000)).toEqual([])
  })
})
