// What an anonymous visitor's page load gets: the page's HTML, its inline scripts and its same-origin
// scripts and the same-origin modules they import, fetched over plain HTTP through the egress guard (no
// browser), within EXPOSURE_LIMITS.
import { AppError } from '../../shared/errors.ts'
import type { EgressHttp } from '../../shared/egress/http.ts'
import { importedScripts, type Source } from './bundle.ts'
import { EXPOSURE_LIMITS } from './model.ts'

/** Script URLs and inline script bodies of a page. */
async function pageScripts(html: string, pageUrl: string): Promise<{ srcs: string[]; inline: string[] }> {
  const srcs: string[] = []
  const inline: string[] = []
  let current: string[] | null = null
  const add = (raw: string | null) => {
    if (!raw) return
    try {
      const u = new URL(raw.trim(), pageUrl)
      if ((u.protocol === 'http:' || u.protocol === 'https:') && !srcs.includes(u.href)) srcs.push(u.href)
    } catch {}
  }
  await new HTMLRewriter()
    .on('script', {
      element(e) {
        const src = e.getAttribute('src')
        if (src !== null) return add(src)
        const type = (e.getAttribute('type') ?? '').toLowerCase()
        if (type && !/javascript|module|json|ecmascript/.test(type)) return
        current = []
        inline.push('')
        e.onEndTag(() => {
          inline[inline.length - 1] = current!.join('')
          current = null
        })
      },
      text(t) {
        current?.push(t.text)
      },
    })
    .on('link', {
      element(e) {
        const rel = (e.getAttribute('rel') ?? '').toLowerCase()
        const as = (e.getAttribute('as') ?? '').toLowerCase()
        if (rel.includes('modulepreload') || (rel.includes('preload') && as === 'script')) add(e.getAttribute('href'))
      },
    })
    .transform(new Response(html))
    .text()
  return { srcs, inline: inline.filter(Boolean) }
}

/** The page and its same-origin scripts, as an anonymous visitor's page load gets them. */
export async function loadBundle(http: EgressHttp, url: URL) {
  const page = await http.get(url.href, {
    redirects: 'any',
    bodyLimit: EXPOSURE_LIMITS.pageBytes,
    headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' },
  })
  if (!page.ok) {
    throw new AppError(page.code, `${url.href} could not be loaded (${page.reason})`, { reason: page.reason })
  }
  const finalUrl = page.res.url
  const origin = new URL(finalUrl).origin
  const notes: string[] = []
  if (page.res.status >= 400) notes.push(`The page answered ${page.res.status}; its body was searched all the same.`)
  const { srcs, inline } = await pageScripts(page.res.body, finalUrl)
  const sources: Source[] = [{ url: finalUrl, text: page.res.body }, ...inline.map((text) => ({ url: finalUrl, text }))]

  const queue = srcs.filter((s) => new URL(s).origin === origin)
  const seen = new Set(queue)
  let skippedCrossOrigin = srcs.length - queue.length
  const loaded: string[] = []
  let truncated = 0
  // Breadth-first over scripts and the same-origin modules they import, at most EXPOSURE_LIMITS.scripts fetches.
  while (queue.length && loaded.length < EXPOSURE_LIMITS.scripts) {
    const batch = queue.splice(0, Math.min(EXPOSURE_LIMITS.concurrency, EXPOSURE_LIMITS.scripts - loaded.length))
    const got = await Promise.all(
      batch.map((s) => http.get(s, { redirects: 'same-origin', bodyLimit: EXPOSURE_LIMITS.scriptBytes, headers: { accept: '*/*' } })),
    )
    got.forEach((g, i) => {
      const src = batch[i]!
      loaded.push(src)
      if (!g.ok || g.res.status !== 200) return
      if (g.res.truncated) truncated++
      sources.push({ url: src, text: g.res.body })
      for (const imp of importedScripts(g.res.body, src)) {
        if (seen.has(imp)) continue
        seen.add(imp)
        if (new URL(imp).origin === origin) queue.push(imp)
        else skippedCrossOrigin++
      }
    })
  }
  if (queue.length) notes.push(`${queue.length} more same-origin scripts were not loaded (limit ${EXPOSURE_LIMITS.scripts}).`)
  if (truncated) notes.push(`${truncated} scripts were larger than ${EXPOSURE_LIMITS.scriptBytes} bytes; only their start was searched.`)
  return { finalUrl, origin, sources, loaded, skippedCrossOrigin, truncated, notes }
}
