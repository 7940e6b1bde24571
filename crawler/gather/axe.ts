// axe-core's accessibility rules over the loaded page (WCAG 2.1 A/AA and best practice), bounded output.
//
// AxeBuilder's default run: axe.runPartial in the page and each of its frames, then axe.finishRun in a blank
// page of the same context, which AxeBuilder opens and loads axe into after the partial runs (a new renderer
// and a second evaluation of axe: 0.4 s of a 0.95 s scan here). A scan hands it a finisher made
// ahead (openFinisher; one per browser, shared by a worker's scans: warm-page.ts SharedFinisher): a blank page with axe loaded and configured as
// AxeBuilder configures its own, so the results are the same (test/crawler/gather/axe.test.ts compares
// them) and only the waiting goes. A page of one frame, the common case, needs neither: axe.run in the page
// itself gives the same findings (runInPage), and only what the artifact reads comes back to node.
//
// Left out: evaluating axe in the page while the scan waits for the network to go quiet (it holds the
// page's main thread for about 0.2 s, so a request the page's own timer sends just after load would go
// out after the quiet window had closed, and the scan would miss it); and shipping axe's source into an
// isolated world of the page during that window, to be run there afterwards (axe itself 60 ms faster,
// the whole scan no faster: 583/580 ms median against 577/575 ms over 25 scans each, alternated).
import { readFileSync } from 'node:fs'
import type AxeBuilder from '@axe-core/playwright'
import type { RunOptions } from 'axe-core'
import type { BrowserContext, Frame, Page } from 'playwright-core'
import { withDeadline, within } from '../../shared/lib/async.ts'
import type { AccessibilityArtifact } from '../../shared/checks/types.ts'

/**
 * axe as evaluated in each page: its minified build (654 KB). The package's `axe.source`, which AxeBuilder
 * injects by default, is the readable build (1.47 MB): the same version and rules, more than twice the bytes
 * to send over the protocol and compile, in the scanned page and in the finisher (0.66 s against 1.0 s per
 * page on the slower 2-core machine). test/crawler/gather/axe.test.ts holds the results equal.
 */
export const AXE_SOURCE = oneByteString(asciiOnly(minifiedAxe()))

/**
 * axe's minified build as the package ships it (its readable one when the two differ in version). Neither
 * axe-core's module nor AxeBuilder is loaded in this process for it: evaluating them in Bun cost a crawler
 * process about 11 MB of resident set, and only a page with frames needs AxeBuilder (runAxe loads it then).
 */
export function minifiedAxe(): string {
  try {
    const version = JSON.parse(readFileSync(require.resolve('axe-core/package.json'), 'utf8')).version
    const min = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8')
    if (min.includes(`axe.version="${version}"`)) return min
  } catch {}
  return require('axe-core').source
}

/**
 * A script's source with every character past ASCII written as its `\u` escape, which JavaScript reads the
 * same in strings, regular expressions, identifiers and comments (an identity escape before one, `\©`, loses
 * its backslash). axe's minified build has 17 such characters (copyright signs, an ellipsis, a Greek letter
 * in a property name); one of them makes the whole 654 KB a UTF-16 string on its way through the protocol
 * (the node side, Chromium's browser process, V8's inspector). Sending it to a fresh page cost the machine
 * 0.03-0.08 CPU-s more as packaged than ASCII-only (bench/axe-cost.ts, four rounds on a paravirtualized
 * 2-core machine).
 */
export function asciiOnly(source: string): string {
  return source.replace(/(\\*)([\u0080-\uffff])/g, (_, slashes: string, c: string) => {
    const kept = slashes.length % 2 === 1 ? slashes.slice(1) : slashes
    return `${kept}\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`
  })
}

/**
 * An ASCII string stored one byte a character, in one piece. Bun's engine keeps a string two bytes a character
 * once it was (axe's file, read with its 17 characters past ASCII, stays so after asciiOnly), and a template
 * that embeds it is a rope joined on every use: each send of axe then copied 1.3 MB before JSON.stringify
 * read it again. Read back from its bytes, the same text is one byte a character and flat.
 */
export function oneByteString(ascii: string): string {
  return Buffer.from(ascii, 'latin1').toString('latin1')
}

/**
 * Evaluates axe's source in the page's main world as a script of its own (the protocol's Runtime.evaluate),
 * not through Playwright's page.evaluate, which hands the source to an indirect eval in its utility script:
 * compiled as eval code, axe cost a fresh renderer's main thread 80 ms against 65 as a script, and 21 ms
 * against 11 when that renderer had compiled it before (warm-page.ts). Rejects when axe threw or the page went.
 */
export async function evaluateAxe(page: Page, source = AXE_SOURCE): Promise<void> {
  const session = await page.context().newCDPSession(page)
  try {
    const r = await session.send('Runtime.evaluate', { expression: axeExpression(source), silent: true })
    if (r.exceptionDetails) throw new Error(`axe did not evaluate: ${r.exceptionDetails.text}`)
  } finally {
    await session.detach().catch(() => {})
  }
}

/**
 * A script that runs the source with `Error.stackTraceLimit` deleted, and puts the page's own limit back after
 * it (or leaves it absent, as the page had it), in the same script: no code of the page runs in between.
 * axe's bundled core-js checks at load whether `Function.prototype.call` is a constructor by constructing it,
 * and the TypeError that throws is made with axe's two outermost functions on the stack, each the whole
 * 654 KB. In a page driven over the protocol, as every page here is, V8 records that error's stack with lines
 * and columns when it is made, and finding them parses both functions again: 46-54 ms of the 135-155 ms a
 * fresh renderer spent evaluating axe on an Intel Xeon at 2.8 GHz. With no limit, no stack is recorded. The
 * block's one name is unlikely to meet a free name in the source (axe's are all its own). A page that froze
 * `Error` keeps its limit: the delete fails quietly and the same descriptor is defined again.
 */
export function withoutErrorStacks(source: string): string {
  return `{ const __appauditStackLimit = Object.getOwnPropertyDescriptor(Error, 'stackTraceLimit'); delete Error.stackTraceLimit; try {
${source}
} finally { if (__appauditStackLimit) Object.defineProperty(Error, 'stackTraceLimit', __appauditStackLimit) } }`
}

/** AXE_SOURCE as it is sent, made once (see oneByteString). */
const AXE_EXPRESSION = oneByteString(withoutErrorStacks(AXE_SOURCE))
/** A source as it is sent: withoutErrorStacks, made once for AXE_SOURCE. */
const axeExpression = (source: string): string => (source === AXE_SOURCE ? AXE_EXPRESSION : withoutErrorStacks(source))

const AXE_IMPACTS = new Set(['minor', 'moderate', 'serious', 'critical'])
export const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']
/** What AxeBuilder evaluates in its blank page after axe (its axeConfigure, for an axe with runPartial). */
const FINISHER_CONFIGURE = `;axe.configure({ allowedOrigins: ["<same_origin>"], branding: { application: 'playwright' } })`

/** How long making a finisher may take; past it the scan's axe finishes in a page of its own, as AxeBuilder does. */
const FINISHER_DEADLINE_MS = 15_000
/** How long axe may take in all: a page that keeps its main thread busy gets no accessibility result. */
const AXE_DEADLINE_MS = 20_000

/**
 * A blank page of the context with axe loaded and configured for finishRun, or null when it cannot be made
 * within FINISHER_DEADLINE_MS (a context closed meanwhile, a busy browser). Never rejects.
 */
export function openFinisher(context: BrowserContext): Promise<Page | null> {
  const made = (async () => {
    const page = await context.newPage()
    await evaluateAxe(page)
    await page.evaluate(FINISHER_CONFIGURE)
    return page
  })()
  return within(made, FINISHER_DEADLINE_MS, null)
}

type AxeResults = Awaited<ReturnType<AxeBuilder['analyze']>>
/**
 * The parts of AxeBuilder replaced here (private in its types): its finishRun and frame injection, the
 * options it runs with, and what it evaluates in a frame.
 */
interface AxeBuilderInternals {
  finishRun(partials: unknown[]): Promise<AxeResults>
  inject(frames: Frame[], shouldThrow?: boolean): Promise<void>
  script(): string
  axeConfigure(): Promise<string>
  option: unknown
  page: Page
}

/** How long evaluating axe in one child frame may take (AxeBuilder allows 1 s). */
const FRAME_INJECT_MS = 10_000

/**
 * AxeBuilder's frame injection with a longer wait. It gives each child frame 1 s to evaluate axe and leaves a
 * frame out of the results when that passes, silently: on a busy 2-core machine evaluating axe takes longer
 * than that, and a page's iframes then lost their findings (the suite caught it under load). The whole run
 * stays under AXE_DEADLINE_MS.
 */
function patientFrameInject(builder: AxeBuilder): void {
  const internals = builder as unknown as AxeBuilderInternals
  internals.inject = async (frames, shouldThrow) => {
    for (const frame of frames) {
      try {
        await withDeadline(frame.evaluate(axeExpression(internals.script())), FRAME_INJECT_MS, 'axe in a frame')
        await frame.evaluate(await internals.axeConfigure())
      } catch (e) {
        if (shouldThrow) throw e
      }
    }
  }
}

/**
 * Has the builder finish its run in the given page (a finisher made ahead, or the page axe ran in), or in its
 * own blank page when that one is not usable.
 */
function finishIn(builder: AxeBuilder, finisher: Promise<Page | null>): void {
  const internals = builder as unknown as AxeBuilderInternals
  const ownFinish = internals.finishRun.bind(builder)
  internals.finishRun = async (partials) => {
    const page = await finisher
    if (!page || page.isClosed()) return ownFinish(partials)
    // Configured as AxeBuilder configures its blank page (a finisher made ahead already is; the page axe ran
    // in, which a crawl finishes in, is not when its own injection was skipped): the help links' branding.
    if (page === internals.page) await page.evaluate(FINISHER_CONFIGURE)
    const finish = page.evaluate(
      ({ json, options }) =>
        (window as unknown as { axe: { finishRun(p: unknown, o: unknown): Promise<AxeResults> } }).axe.finishRun(JSON.parse(json), options),
      { json: JSON.stringify(partials), options: internals.option },
    )
    if (page === internals.page) return finish
    // A finisher shared by scans (warm-page.ts) that closed or crashed meanwhile: AxeBuilder finishes on its
    // own (an error of axe itself comes again from there).
    return finish.catch(() => ownFinish(partials))
  }
}

/**
 * Evaluates axe in the page's main frame ahead of runAxe, while the page is still being read: sending and
 * starting axe (0.2 s of protocol traffic for 654 KB on the slower machine) overlaps the reads. axe only
 * defines itself: no node, request or cookie of the page changes. Resolves whether it is there.
 */
export function preloadAxe(page: Page): Promise<boolean> {
  return evaluateAxe(page).then(
    () => true,
    () => false,
  )
}

/**
 * AxeBuilder evaluates axe in the main frame first of all (analyze), then in each child frame and in its
 * finishing page: when the main frame already has it (preloadAxe), its first evaluation is skipped.
 */
async function skipMainFrameInject(builder: AxeBuilder, page: Page): Promise<void> {
  const loaded = await page.evaluate('typeof window.axe?.runPartial').catch(() => 'undefined')
  if (loaded !== 'function') return
  const internals = builder as unknown as AxeBuilderInternals
  const script = internals.script.bind(builder)
  let first = true
  internals.script = () => {
    if (!first) return script()
    first = false
    return 'void 0'
  }
}

/**
 * What an artifact is made of (toAxeArtifact): the engine, the violations' rule, impact, help and node targets,
 * and how many rules passed and were incomplete. The rest of axe's results (40-50 KB on the capacity bench's
 * pages: every rule's description and tags, the passing nodes' HTML) is left in the page.
 */
type ThinResults = Pick<AxeResults, 'testEngine' | 'violations' | 'passes' | 'incomplete'>

type AxeInPage = {
  axe: { configure(o: unknown): void; run(context: unknown, options: unknown): Promise<AxeResults> }
}

/**
 * axe.run in the page itself, for a page of one frame with axe already evaluated in it: the same findings as
 * runPartial and finishRun (test/crawler/gather/axe.test.ts holds them equal), without sending the partial
 * results to node and on to a finishing page (Chromium 47-54 ms against 69-75, node 2 against 22-24 over the
 * capacity bench's pages). null when the page has a frame after all (one attached since the caller looked):
 * AxeBuilder's run then goes through every frame.
 */
function runInPage(page: Page, options: unknown): Promise<ThinResults | null> {
  return page.evaluate(
    async ({ options }) => {
      if (document.querySelector('iframe, frame, object, embed')) return null
      const w = window as unknown as AxeInPage
      w.axe.configure({ branding: { application: 'playwright' } })
      const r = await w.axe.run(document, { ...(options as object), iframes: false })
      return {
        testEngine: r.testEngine,
        violations: r.violations.slice(0, 50).map((v) => ({ ...v, nodes: v.nodes.map((n) => ({ target: n.target })) })),
        passes: r.passes.map(() => 0),
        incomplete: r.incomplete.map(() => 0),
      } as unknown as ThinResults
    },
    { options },
  )
}

/** Whether axe is evaluated in the page's main frame and the page has no other frame. */
async function oneFrameWithAxe(page: Page, preloaded: Promise<boolean> | undefined): Promise<boolean> {
  if (!preloaded || !(await preloaded)) return false
  return page.frames().length === 1
}

/** The artifact of axe's results: at most 50 violations, 5 targets each. */
export function toAxeArtifact(r: ThinResults): AccessibilityArtifact {
  return {
    engine: `${r.testEngine.name} ${r.testEngine.version}`,
    violations: r.violations.slice(0, 50).map((v) => ({
      id: v.id,
      impact: AXE_IMPACTS.has(v.impact ?? '') ? (v.impact as 'minor') : null,
      help: v.help,
      helpUrl: v.helpUrl,
      nodes: v.nodes.length,
      targets: v.nodes.slice(0, 5).map((n) => n.target.join(' ')),
    })),
    passes: r.passes.length,
    incomplete: r.incomplete.length,
  }
}

/**
 * The options of every run: WCAG 2.1 A/AA and best practice; full details for violations only (axe still
 * names every rule that passed or was incomplete, with one node each instead of all: it builds a selector and
 * an HTML snippet for each node it reports, which the artifact, counting those rules, does not read).
 */
const axeOptions = (): RunOptions => ({ resultTypes: ['violations'] })

/** What AxeBuilder runs axe with after `.options(axeOptions()).withTags(AXE_TAGS)` (axe.test.ts holds them equal). */
export const axeRunOptions = (): RunOptions => ({ ...axeOptions(), runOnly: { type: 'tag', values: AXE_TAGS } })

/** AxeBuilder for a page whose axe goes through its frames, with the replacements above. */
async function axeBuilder(page: Page, source: string, finisher: Promise<Page | null> | undefined): Promise<AxeBuilder> {
  const { default: Builder } = await import('@axe-core/playwright')
  const builder = new Builder({ page: page as never, axeSource: source }).options(axeOptions()).withTags(AXE_TAGS)
  patientFrameInject(builder)
  if (finisher) finishIn(builder, finisher)
  return builder
}

export async function runAxe(
  page: Page,
  /**
   * `source`: the axe evaluated in the page (tests compare the package's readable build with the minified one).
   * `preloaded`: preloadAxe's promise for this page.
   */
  opts: { finisher?: Promise<Page | null>; deadlineMs?: number; source?: string; preloaded?: Promise<boolean> } = {},
): Promise<AccessibilityArtifact | null> {
  try {
    const analyze = async (): Promise<ThinResults> => {
      if (await oneFrameWithAxe(page, opts.preloaded)) {
        const alone = await runInPage(page, axeRunOptions())
        if (alone) return alone
      }
      const builder = await axeBuilder(page, opts.source ?? AXE_SOURCE, opts.finisher)
      if (opts.preloaded && (await opts.preloaded)) await skipMainFrameInject(builder, page)
      return builder.analyze()
    }
    // What is still evaluating when the deadline passes ends with the page's context, which its caller closes.
    return toAxeArtifact(await withDeadline(analyze(), opts.deadlineMs ?? AXE_DEADLINE_MS, 'axe'))
  } catch {
    return null
  }
}
