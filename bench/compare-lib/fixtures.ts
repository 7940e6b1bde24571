// The fixture sites a comparison runs over: every module in test/fixtures/sites/ (each exports start()),
// scanned at the URL its expectations file names when there is one, else at the URL it reports. When that
// directory holds no site module, the three classic sites of test/fixtures/sites.ts stand in.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { hardenedSite, spaSite, weakSite } from '../../test/fixtures/sites.ts'
import { scanUrl, type FixtureSite } from '../../test/fixtures/sites/lib/serve.ts'
import { withTimeout } from '../lib/stats.ts'
import { errorMessage } from '../../shared/errors.ts'

const ROOT = join(import.meta.dir, '..', '..')
export const SITES_DIR = join(ROOT, 'test', 'fixtures', 'sites')
export const EXPECTATIONS_DIR = join(ROOT, 'test', 'fixtures', 'expectations')

export interface StartedFixture {
  name: string
  site: FixtureSite
  /** The URL our scan_app is given. */
  scanUrl: string
  /** Where the URL came from: the expectations file or the site itself. */
  urlSource: 'expectations' | 'site'
}

export interface FixtureStartError {
  name: string
  error: string
}

/** Names of the site modules, sorted; empty when the directory is missing. */
export function fixtureNames(): string[] {
  if (!existsSync(SITES_DIR)) return []
  return readdirSync(SITES_DIR)
    .filter((f) => f.endsWith('.ts'))
    .map((f) => f.slice(0, -'.ts'.length))
    .sort()
}

/** The scan URL template of an expectations file ("{http}/", "{https}/..."), or null without one. */
function expectationUrl(name: string): string | null {
  const file = join(EXPECTATIONS_DIR, `${name}.json`)
  if (!existsSync(file)) return null
  try {
    const raw = JSON.parse(readFileSync(file, 'utf8')) as { url?: unknown }
    return typeof raw.url === 'string' ? raw.url : null
  } catch {
    return null
  }
}

async function classicSites(): Promise<StartedFixture[]> {
  const out: StartedFixture[] = []
  const weak = await weakSite()
  out.push({ name: 'weak', site: { ...weak, origins: { http: new URL(weak.url).origin } }, scanUrl: weak.url, urlSource: 'site' })
  const spa = await spaSite()
  out.push({ name: 'spa', site: { ...spa, origins: { http: new URL(spa.url).origin } }, scanUrl: spa.url, urlSource: 'site' })
  const hardened = await hardenedSite()
  out.push({
    name: 'hardened',
    site: { ...hardened, origins: { http: new URL(hardened.url).origin, https: new URL(hardened.httpsUrl).origin } },
    scanUrl: hardened.url,
    urlSource: 'site',
  })
  return out
}

/** Starts the fixtures (optionally only the named ones); a site that fails to start is reported, not fatal. */
export async function startFixtures(only?: string[]): Promise<{ started: StartedFixture[]; failed: FixtureStartError[] }> {
  const names = fixtureNames().filter((n) => !only || only.includes(n))
  if (names.length === 0 && (!only || only.some((n) => ['weak', 'spa', 'hardened'].includes(n)))) {
    const classic = await classicSites()
    return { started: classic.filter((s) => !only || only.includes(s.name)), failed: [] }
  }
  const started: StartedFixture[] = []
  const failed: FixtureStartError[] = []
  for (const name of names) {
    try {
      const mod = (await import(join(SITES_DIR, `${name}.ts`))) as { start?: () => Promise<FixtureSite> }
      if (typeof mod.start !== 'function') throw new Error(`sites/${name}.ts does not export start()`)
      const site = await withTimeout(mod.start(), 30_000, `starting sites/${name}.ts`)
      const template = expectationUrl(name)
      const fromTemplate = template ? scanUrl(template, site) : null
      started.push({ name, site, scanUrl: fromTemplate ?? site.url, urlSource: fromTemplate ? 'expectations' : 'site' })
    } catch (e) {
      failed.push({ name, error: errorMessage(e) })
    }
  }
  return { started, failed }
}

export async function stopFixtures(started: StartedFixture[]): Promise<void> {
  for (const s of started) await s.site.stop().catch(() => {})
}
