// Sitemaps (sitemaps.org 0.9): url sets, indexes, entities and CDATA, plain-text sitemaps.
import { describe, expect, test } from 'bun:test'
import { parseSitemap } from '../../../crawler/audit/sitemap.ts'

describe('sitemap parsing', () => {
  test('reads the locations of a urlset, unescaping entities', () => {
    const xml = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>https://example.com/</loc><lastmod>2024-01-01</lastmod></url>
  <url><loc> https://example.com/a?x=1&amp;y=2 </loc></url>
  <url><loc>https://example.com/caf&#xE9;</loc></url>
</urlset>`
    expect(parseSitemap(xml)).toEqual({
      kind: 'urlset',
      locs: ['https://example.com/', 'https://example.com/a?x=1&y=2', 'https://example.com/café'],
    })
  })

  test('recognises a sitemap index', () => {
    const xml = `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>https://example.com/s1.xml</loc></sitemap><sitemap><loc>https://example.com/s2.xml.gz</loc></sitemap></sitemapindex>`
    expect(parseSitemap(xml)).toEqual({ kind: 'index', locs: ['https://example.com/s1.xml', 'https://example.com/s2.xml.gz'] })
  })

  test('accepts CDATA, namespace prefixes and a byte-order mark', () => {
    const xml = `\uFEFF<?xml version="1.0"?><sm:urlset xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9"><sm:url><sm:loc><![CDATA[https://example.com/a&b]]></sm:loc></sm:url></sm:urlset>`
    expect(parseSitemap(xml)).toEqual({ kind: 'urlset', locs: ['https://example.com/a&b'] })
  })

  test('reads a plain-text sitemap, one URL per line', () => {
    expect(parseSitemap('https://example.com/a\n\nnot a url\r\nhttps://example.com/b\n')).toEqual({
      kind: 'text',
      locs: ['https://example.com/a', 'https://example.com/b'],
    })
  })

  test('tolerates garbage and returns nothing from it', () => {
    expect(parseSitemap('<html><body>Not found</body></html>').locs).toEqual([])
  })
})
