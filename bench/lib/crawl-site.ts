// A fixture site for crawl benchmarks: N pages of realistic size on 127.0.0.1, port 0. Each page has a
// few KB of HTML, the site's stylesheet and a small script, and links to about five other pages (the next
// page among them, so every page is reachable by links alone); /sitemap.xml lists them all and robots.txt
// names it. Pages are built once; the server only looks them up.

export interface CrawlSite {
  url: string
  pages: number
  /** Requests answered, by kind, since start. */
  hits: { page: number; asset: number; other: number }
  stop(): void
}

const CSS = `body{font:16px/1.5 system-ui,sans-serif;margin:0;color:#222}header,footer{background:#f4f4f4;padding:1em 2em}
main{max-width:60em;margin:0 auto;padding:1em 2em}nav a{margin-right:1em}.card{border:1px solid #ddd;border-radius:6px;padding:1em;margin:1em 0}
table{border-collapse:collapse;width:100%}td,th{border:1px solid #ddd;padding:.4em}.muted{color:#777}`.repeat(3)

const JS = `(function(){var t=document.querySelectorAll('.card');for(var i=0;i<t.length;i++){t[i].setAttribute('data-i',String(i))}
document.documentElement.classList.add('js');})();`

const WORDS = 'audit crawl page header policy origin browser frame socket token report score check advice site link'.split(' ')

function paragraph(seed: number, words: number): string {
  let s = ''
  for (let i = 0; i < words; i++) s += WORDS[(seed * 31 + i * 7) % WORDS.length] + (i % 12 === 11 ? '. ' : ' ')
  return `${s.trim()}.`
}

/** Page i links to the next page and four others spread over the site. */
export function linksOf(i: number, n: number): number[] {
  const out = new Set([(i + 1) % n, (i * 2 + 1) % n, (i * 3 + 7) % n, (i + n / 2) % n, (i * 7 + 3) % n].map((x) => Math.floor(x)))
  out.delete(i)
  return [...out]
}

const pathOf = (i: number) => (i === 0 ? '/' : `/page/${i}`)

function pageHtml(i: number, n: number): string {
  const links = linksOf(i, n)
    .map((j) => `<a href="${pathOf(j)}">Page ${j}</a>`)
    .join(' ')
  const cards = Array.from({ length: 6 }, (_, k) => `<div class="card"><h2>Section ${k + 1}</h2><p>${paragraph(i + k, 60)}</p></div>`).join(
    '\n',
  )
  const rows = Array.from(
    { length: 8 },
    (_, k) => `<tr><td>${k}</td><td>${WORDS[(i + k) % WORDS.length]}</td><td>${(i * 13 + k) % 100}</td></tr>`,
  ).join('')
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Fixture page ${i}</title><meta name="description" content="Fixture page ${i} of ${n} for crawl benchmarks.">
<link rel="stylesheet" href="/assets/site.css"></head>
<body><header><nav><a href="/">Home</a> ${links}</nav></header>
<main><h1>Fixture page ${i}</h1>${cards}<table><tr><th>#</th><th>word</th><th>n</th></tr>${rows}</table></main>
<footer class="muted">Page ${i} of ${n}</footer><script src="/assets/site.js"></script></body></html>`
}

export function startCrawlSite(n = 200): CrawlSite {
  const pages = new Map<string, string>()
  for (let i = 0; i < n; i++) pages.set(pathOf(i), pageHtml(i, n))
  const hits = { page: 0, asset: 0, other: 0 }
  let origin = ''
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req) {
      const path = new URL(req.url).pathname
      const body = pages.get(path)
      if (body !== undefined) {
        hits.page++
        return new Response(body, { headers: { 'content-type': 'text/html; charset=utf-8' } })
      }
      if (path === '/assets/site.css' || path === '/assets/site.js') {
        hits.asset++
        const css = path.endsWith('.css')
        return new Response(css ? CSS : JS, {
          headers: { 'content-type': css ? 'text/css' : 'application/javascript', 'cache-control': 'public, max-age=3600' },
        })
      }
      hits.other++
      if (path === '/robots.txt')
        return new Response(`User-agent: *\nAllow: /\nSitemap: ${origin}/sitemap.xml\n`, { headers: { 'content-type': 'text/plain' } })
      if (path === '/sitemap.xml') {
        const urls = [...pages.keys()].map((p) => `<url><loc>${origin}${p}</loc></url>`).join('')
        return new Response(
          `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${urls}</urlset>`,
          {
            headers: { 'content-type': 'application/xml' },
          },
        )
      }
      return new Response('not found', { status: 404, headers: { 'content-type': 'text/plain' } })
    },
  })
  origin = `http://127.0.0.1:${server.port}`
  return { url: `${origin}/`, pages: n, hits, stop: () => void server.stop(true) }
}
