// The size of tools/list as the official SDK client receives it, and how long that client takes over its
// listTools: the first on a new client compiles every outputSchema (Ajv) and caches the validators, the later
// ones only fetch and parse. Every connected client carries the list in its context on every turn, and the
// first listTools is what a session waits for before its first tool call (issue 25: 3.5-4.4 s here for a
// 63 KB list). Times are printed beside a reference in the same process: a bare SDK server (Bun.serve, the
// SDK's web-standard transport, stateless) with one trivial tool, reached by the same client code.
//
//   bun bench/tool-list.ts            5 rounds of new clients after the first
//   bun bench/tool-list.ts --quick    2 rounds
//   options: --rounds=N --later=N --reference-first --verbose --result=FILE
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv'
import { Ajv } from 'ajv'
import addFormats from 'ajv-formats'
import { startBenchService } from './lib/service.ts'
import { flag, fmtInt, fmtMs, fmtRatio, intFlag, summarize, table, writeResult } from './lib/stats.ts'

/** The targets of issue 25, in bytes and milliseconds. */
export const TARGETS = { totalBytes: 24 * 1024, namesDescriptionsInputsBytes: 12 * 1024, firstListToolsMs: 1_000 }

type Listed = Awaited<ReturnType<Client['listTools']>>

export interface ToolListSizes {
  total: number
  namesDescriptionsInputs: number
  outputSchemas: number
  tools: number
}

export interface ToolListResult {
  bench: 'tool-list'
  sizes: ToolListSizes
  /** Milliseconds: the very first listTools of the process, then medians over new clients and later calls. */
  ours: { cold: number; first: number; later: number }
  reference: { cold: number; first: number; later: number }
  /** Compiling the 18 outputSchemas alone in a new Ajv, as a new client does, median ms. */
  compileMs: number
  /** Characters of the validator code Ajv generates for them: what the compile costs, whatever the machine's load. */
  generatedCode: number
  targets: typeof TARGETS
}

const bytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v), 'utf8')

/** The bytes of the list as the client holds it, split into what an agent chooses by and the output schemas. */
export function sizesOf(list: Listed): ToolListSizes {
  let namesDescriptionsInputs = 0
  let outputSchemas = 0
  for (const t of list.tools) {
    namesDescriptionsInputs += bytes({ name: t.name, description: t.description, inputSchema: t.inputSchema })
    if (t.outputSchema) outputSchemas += bytes(t.outputSchema)
  }
  return { total: bytes(list), namesDescriptionsInputs, outputSchemas, tools: list.tools.length }
}

/** The characters of code Ajv writes for every outputSchema, with the options the SDK client's Ajv has. */
function generatedCode(list: Listed): number {
  const ajv = new Ajv({ strict: false, validateFormats: true, validateSchema: false, allErrors: true, code: { source: true } })
  ;(addFormats as unknown as (a: Ajv) => void)(ajv)
  return list.tools.reduce((n, t) => n + (t.outputSchema ? ajv.compile(t.outputSchema).toString().length : 0), 0)
}

/** A bare SDK server with one trivial tool: a new Server and transport per request (the SDK's stateless pattern). */
function startReference() {
  const tool = {
    name: 'ping',
    description: 'Answers pong.',
    inputSchema: { type: 'object' as const, properties: {} },
    outputSchema: { type: 'object' as const, properties: { pong: { type: 'boolean' } }, required: ['pong'] },
  }
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      const mcp = new Server({ name: 'reference', version: '1.0.0' }, { capabilities: { tools: {} } })
      mcp.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [tool] }))
      mcp.setRequestHandler(CallToolRequestSchema, async () => ({ content: [], structuredContent: { pong: true } }))
      const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
      await mcp.connect(transport)
      return transport.handleRequest(req)
    },
  })
  return { url: `http://127.0.0.1:${server.port}/mcp`, stop: () => server.stop(true) }
}

async function connect(url: string, key?: string): Promise<Client> {
  const client = new Client({ name: 'bench-tool-list', version: '1.0.0' })
  const headers: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {}
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }))
  return client
}

async function timed<T>(f: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t0 = performance.now()
  const value = await f()
  return { ms: performance.now() - t0, value }
}

/** A new client's first listTools, then `later` more on the same client; the client is closed after. */
async function round(url: string, key: string | undefined, later: number) {
  const client = await connect(url, key)
  try {
    const first = await timed(() => client.listTools())
    const rest: number[] = []
    for (let i = 0; i < later; i++) rest.push((await timed(() => client.listTools())).ms)
    return { first: first.ms, later: rest, list: first.value }
  } finally {
    await client.close().catch(() => {})
  }
}

const quick = flag('quick') === true
const rounds = intFlag('rounds', quick ? 2 : 5, 1, 50)
const laterCalls = intFlag('later', 3, 1, 20)

const svc = await startBenchService('embedded')
const ref = startReference()
try {
  const key = await svc.key('free')
  // The first of the process: nothing of the client's schema code has run yet. Ours goes first, as in a session,
  // unless --reference-first: then the reference pays for warming the SDK client's code and ours does not.
  const referenceFirst = flag('reference-first') === true
  const coldRef0 = referenceFirst ? await round(ref.url, undefined, laterCalls) : null
  const coldOurs = await round(svc.mcpUrl, key, laterCalls)
  const coldRef = coldRef0 ?? (await round(ref.url, undefined, laterCalls))
  const ours = { first: [] as number[], later: [...coldOurs.later] }
  const reference = { first: [] as number[], later: [...coldRef.later] }
  for (let i = 0; i < rounds; i++) {
    const o = await round(svc.mcpUrl, key, laterCalls)
    const r = await round(ref.url, undefined, laterCalls)
    ours.first.push(o.first)
    ours.later.push(...o.later)
    reference.first.push(r.first)
    reference.later.push(...r.later)
  }
  const compile: number[] = []
  for (let i = 0; i < rounds; i++) {
    const ajv = new AjvJsonSchemaValidator()
    compile.push((await timed(async () => coldOurs.list.tools.map((t) => t.outputSchema && ajv.getValidator(t.outputSchema)))).ms)
  }

  if (flag('verbose')) console.error(JSON.stringify({ ours, reference, compile }))
  const sizes = sizesOf(coldOurs.list)
  const med = (xs: number[]) => summarize(xs).median
  const result: ToolListResult = {
    bench: 'tool-list',
    sizes,
    ours: { cold: coldOurs.first, first: med(ours.first), later: med(ours.later) },
    reference: { cold: coldRef.first, first: med(reference.first), later: med(reference.later) },
    compileMs: med(compile),
    generatedCode: generatedCode(coldOurs.list),
    targets: TARGETS,
  }

  console.log(`tools/list as the SDK client receives it (${sizes.tools} tools), bytes of JSON\n`)
  console.log(
    table([
      ['part', 'bytes', 'target'],
      ['names + descriptions + input schemas', fmtInt(sizes.namesDescriptionsInputs), `<= ${fmtInt(TARGETS.namesDescriptionsInputsBytes)}`],
      ['output schemas', fmtInt(sizes.outputSchemas), ''],
      ['the whole result', fmtInt(sizes.total), `<= ${fmtInt(TARGETS.totalBytes)}`],
    ]),
  )
  console.log(`\nSDK client listTools, ms (median of ${rounds} new clients; later: ${laterCalls} more calls each)\n`)
  const row = (name: string, o: number, r: number) => [name, fmtMs(o), fmtMs(r), fmtRatio(o / r)]
  console.log(
    table([
      ['call', 'ours', 'reference (1 tool)', 'ratio'],
      row('first of the process', result.ours.cold, result.reference.cold),
      row('first of a new client', result.ours.first, result.reference.first),
      row('later', result.ours.later, result.reference.later),
    ]),
  )
  console.log(
    `\nCompiling the ${sizes.tools} output schemas in a new Ajv (what a new client does): ${fmtMs(result.compileMs)} (median); ` +
      `${fmtInt(result.generatedCode)} characters of validator code generated`,
  )
  const met = (ok: boolean) => (ok ? 'met' : 'NOT met')
  console.log(
    `\nTargets: whole <= 24 KB ${met(sizes.total <= TARGETS.totalBytes)}; names+descriptions+inputs <= 12 KB ` +
      `${met(sizes.namesDescriptionsInputs <= TARGETS.namesDescriptionsInputsBytes)}; first listTools <= 1 s ` +
      `${met(result.ours.cold <= TARGETS.firstListToolsMs)} (first of the process)`,
  )
  await writeResult(result)
} finally {
  ref.stop()
  await svc.stop()
}
process.exit(0)
