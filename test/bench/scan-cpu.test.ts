// bench/scan-cpu.ts's reading of Chromium's processes: each one's kind from its command line, as /proc gives
// it (NUL between arguments, or one string joined by spaces once a zygote child has set its own), checked on
// made-up lines and on a real Chromium's processes.
import { expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { chromium } from 'playwright-core'
import { kindFromCmdline, treeMemory } from '../../bench/lib/proc-memory.ts'
import { descendantsOf, readAll } from '../../bench/capacity-lib/cpu.ts'
import { CHROMIUM_ARGS, chromiumPath } from '../../crawler/browser.ts'

test('the kind of a process from its command line, NUL- or space-separated', () => {
  const nul = (...args: string[]) => `${args.join('\0')}\0`
  expect(kindFromCmdline(nul('/usr/lib/chromium/chromium-headless-shell', '--headless', '--no-sandbox'))).toBe('browser')
  expect(kindFromCmdline('/usr/lib/chromium/chromium --type=renderer --lang=en-US --renderer-client-id=7')).toBe('renderer')
  expect(kindFromCmdline(nul('/usr/lib/chromium/chromium', '--type=gpu-process', '--no-sandbox'))).toBe('gpu-process')
  expect(kindFromCmdline(nul('/usr/lib/chromium/chromium', '--type=zygote'))).toBe('zygote')
  expect(kindFromCmdline('x --type=utility --utility-sub-type=network.mojom.NetworkService --lang=en-US')).toBe('utility:network')
  expect(kindFromCmdline(nul('x', '--type=utility', '--utility-sub-type=storage.mojom.StorageService'))).toBe('utility:storage')
})

test("a real Chromium's processes read as a browser, a renderer per page and its helpers", async () => {
  const browser = await chromium.launch({ executablePath: chromiumPath(''), args: CHROMIUM_ARGS, timeout: 30_000 })
  try {
    await (await browser.newPage()).setContent('<p>x</p>')
    const all = readAll()
    const kinds = descendantsOf(process.pid, all)
      .filter((pid) => /chrom/.test(all.get(pid)!.comm))
      .map((pid) => {
        try {
          return kindFromCmdline(readFileSync(`/proc/${pid}/cmdline`, 'utf8'))
        } catch {
          return 'gone'
        }
      })
    expect(kinds).toContain('browser')
    expect(kinds).toContain('renderer')
    expect(kinds.every((k) => /^(browser|renderer|gpu-process|zygote|utility:\w+|gone)$/.test(k))).toBe(true)
    // The same tree's memory as bench/crawl-throughput reads it at a peak: this process by its name, Chromium's
    // by kind, and the proportional set below the resident sum (Chromium's processes share their binary).
    const mem = treeMemory(process.pid)
    expect(mem.byKind.browser?.n).toBe(1)
    expect(mem.byKind.renderer?.n).toBeGreaterThanOrEqual(1)
    // This process by its command name (bun, or bun.exe when started by its real path).
    expect(mem.byKind[readFileSync(`/proc/${process.pid}/comm`, 'utf8').trim()]?.n).toBe(1)
    const kindsRss = Object.values(mem.byKind).reduce((a, k) => a + k.rssMb, 0)
    expect(Math.abs(kindsRss - mem.rssMb)).toBeLessThan(0.01)
    expect(mem.pssMb).toBeGreaterThan(0)
    expect(mem.pssMb).toBeLessThan(mem.rssMb)
  } finally {
    await browser.close()
  }
}, 60_000)
