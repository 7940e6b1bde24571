// What a crawl knows before its first lane runs: the origin it stays on and the URL it starts from (where
// the site-level scan landed), robots.txt (obeyed, RFC 9309), the resumed pages and their links, and the
// sitemaps (robots' Sitemap lines, else /sitemap.xml; indexes followed), read beside the lanes.
import { errorMessage } from '../../shared/errors.ts'
import type { EgressProxy } from '../../shared/egress/proxy.ts'
import type { Logger } from '../../shared/lib/log.ts'
import { CRAWL, type CrawlOptions } from './crawl-options.ts'
import { bodyText, fetchBytes } from './fetch.ts'
import { type Frontier, normaliseUrl } from './frontier.ts'
import { ROBOTS_MAX_BYTES, robotsFor, robotsForStatus, type Robots } from './robots.ts'
import type { CrawlRun } from './run.ts'
import { parseSitemap, SITEMAP_MAX_BYTES } from './sitemap.ts'

/**
 * The origin the crawl stays on and its normalised start URL. The site checks read the start page without
 * credentials, so it may have been redirected to a login page: an authenticated crawl starts at the URL it
 * was asked for, on its origin (or the https origin of the same host, when the site redirected there).
 */
export function crawlStart(opts: CrawlOptions, landedOn: { origin: string; finalUrl: string }): { origin: string; startUrl: string } {
  const asked = new URL(opts.startUrl)
  const landed = new URL(landedOn.finalUrl)
  const origin = !opts.auth || landed.host === asked.host ? landedOn.origin : asked.origin
  const startFrom = opts.auth ? `${origin}${asked.pathname}${asked.search}` : landedOn.finalUrl
  return { origin, startUrl: normaliseUrl(startFrom, startFrom, origin) ?? startFrom }
}

export async function loadRobots(
  origin: string,
  proxy: EgressProxy,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<{ robots: Robots; status: number | null }> {
  const got = await fetchBytes(`${origin}/robots.txt`, proxy, timeoutMs, ROBOTS_MAX_BYTES, signal)
  if (!got.ok) return { robots: robotsForStatus(null), status: null }
  if (got.status >= 200 && got.status < 300)
    return { robots: robotsFor(bodyText(got.body, ROBOTS_MAX_BYTES), CRAWL.robotsToken), status: got.status }
  return { robots: robotsForStatus(got.status), status: got.status }
}

/**
 * The frontier as the crawl feeds it: links queued from a page wake the lanes waiting for work, and the
 * caller hears the count of distinct pages whenever it changed.
 */
export class Discovery {
  private reported = -1

  constructor(
    readonly frontier: Frontier,
    private readonly run: CrawlRun,
    private readonly onDiscovered: (total: number) => void,
  ) {}

  /** Tells the caller the count of pages known, when it changed since last told. */
  report(): void {
    if (this.frontier.size === this.reported) return
    this.reported = this.frontier.size
    try {
      this.onDiscovered(this.frontier.size)
    } catch {}
  }

  /** Queues a page's links (already normalised) one hop deeper. */
  queueLinks(links: string[], depth: number): void {
    let added = false
    for (const l of links) added = this.frontier.add(l, depth) || added
    if (added) this.run.wake()
    this.report()
  }

  /** A sitemap's page, at depth 1. */
  addSitemapPage(loc: string, origin: string): void {
    const url = normaliseUrl(loc, loc, origin)
    if (url && this.frontier.add(url, 1)) this.run.wake()
  }
}

/** The start URL and the resumed pages' links; the resumed pages themselves are done. */
export function seedFrontier(found: Discovery, startUrl: string, origin: string, resume: NonNullable<CrawlOptions['resume']>): void {
  const fr = found.frontier
  for (const r of resume) fr.markDone(normaliseUrl(r.url, r.url, origin) ?? r.url)
  // The start URL is what the caller asked to audit: visited even when robots.txt disallows it.
  if (!fr.has(startUrl)) fr.add(startUrl, 0, true)
  for (const r of resume)
    found.queueLinks(
      r.links.map((l) => normaliseUrl(l, r.url, origin)).filter((l): l is string => l !== null),
      r.depth + 1,
    )
  found.report()
}

/** Feeds the sitemaps' pages to the frontier as they are read, beside the lanes. Never rejects. */
export function seedFromSitemaps(
  origin: string,
  named: string[],
  proxy: EgressProxy,
  timeoutMs: number,
  signal: AbortSignal,
  found: Discovery,
  log: Logger,
): Promise<void> {
  return loadSitemaps(origin, named, proxy, timeoutMs, signal, (loc) => found.addSitemapPage(loc, origin)).catch((e) =>
    log.warn('sitemaps could not be read', { error: errorMessage(e) }),
  )
}

/** Page URLs from the sitemaps, indexes followed breadth first; bounded in files and URLs. */
async function loadSitemaps(
  origin: string,
  named: string[],
  proxy: EgressProxy,
  timeoutMs: number,
  signal: AbortSignal,
  add: (url: string) => void,
): Promise<void> {
  // Sitemaps named in robots.txt may live elsewhere (the protocol's cross-submission); others must be on the origin.
  const queue = named.length ? [...named] : [`${origin}/sitemap.xml`]
  const seen = new Set<string>()
  let pages = 0
  while (queue.length > 0 && seen.size < CRAWL.maxSitemapFiles && !signal.aborted) {
    const url = queue.shift()!
    if (seen.has(url)) continue
    seen.add(url)
    const got = await fetchBytes(url, proxy, timeoutMs, SITEMAP_MAX_BYTES, signal)
    if (!got.ok || got.status !== 200) continue
    const parsed = parseSitemap(bodyText(got.body, SITEMAP_MAX_BYTES))
    for (const loc of parsed.locs) {
      if (parsed.kind === 'index') {
        const next = normaliseSitemapUrl(loc, origin)
        if (next) queue.push(next)
      } else if (pages < CRAWL.maxSitemapPages) {
        pages++
        add(loc)
      }
    }
  }
}

function normaliseSitemapUrl(loc: string, origin: string): string | null {
  try {
    const u = new URL(loc)
    return u.origin === origin ? u.href : null
  } catch {
    return null
  }
}
