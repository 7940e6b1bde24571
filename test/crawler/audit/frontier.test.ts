// URL normalisation and the frontier's order and bounds.
import { describe, expect, test } from 'bun:test'
import { Frontier, MAX_QUERY_VARIANTS_PER_PATH, normaliseUrl } from '../../../crawler/audit/frontier.ts'

const O = 'http://site.test'

describe('link normalisation', () => {
  test('resolves relative links, drops fragments and tracking parameters, sorts the query', () => {
    expect(normaliseUrl('../b?z=1&a=2#top', `${O}/x/y/`, O)).toBe(`${O}/x/b?a=2&z=1`)
    expect(normaliseUrl('/about?utm_source=n&utm_medium=e', `${O}/`, O)).toBe(`${O}/about`)
    expect(normaliseUrl('#section', `${O}/page`, O)).toBe(`${O}/page`)
  })

  test('keeps the same origin only, http(s) only', () => {
    expect(normaliseUrl('https://site.test/', `${O}/`, O)).toBeNull()
    expect(normaliseUrl('http://site.test:8080/', `${O}/`, O)).toBeNull()
    expect(normaliseUrl('http://other.test/', `${O}/`, O)).toBeNull()
    expect(normaliseUrl('mailto:a@b.c', `${O}/`, O)).toBeNull()
    expect(normaliseUrl('javascript:void(0)', `${O}/`, O)).toBeNull()
  })

  test('skips files by extension', () => {
    expect(normaliseUrl('/files/report.PDF', `${O}/`, O)).toBeNull()
    expect(normaliseUrl('/img/a.png?v=2', `${O}/`, O)).toBeNull()
    expect(normaliseUrl('/blog/post.html', `${O}/`, O)).toBe(`${O}/blog/post.html`)
  })
})

describe('frontier', () => {
  test('hands out URLs breadth first and never twice', () => {
    const f = new Frontier(5, () => true)
    f.add(`${O}/deep`, 2)
    f.add(`${O}/`, 0)
    f.add(`${O}/a`, 1)
    expect(f.add(`${O}/a`, 1)).toBe(false)
    expect([f.next()?.url, f.next()?.url, f.next()?.url, f.next()]).toEqual([`${O}/`, `${O}/a`, `${O}/deep`, null])
  })

  test('refuses URLs beyond the depth cap and those the gate refuses, unless forced', () => {
    const f = new Frontier(1, (u) => !u.pathname.startsWith('/private'))
    expect(f.add(`${O}/x`, 2)).toBe(false)
    expect(f.add(`${O}/private/a`, 1)).toBe(false)
    expect(f.add(`${O}/private/b`, 0, true)).toBe(true)
  })

  test('keeps a bounded number of query variants per path', () => {
    const f = new Frontier(5, () => true)
    const added = Array.from({ length: 12 }, (_, i) => f.add(`${O}/list?page=${i}`, 1)).filter(Boolean).length
    expect(added).toBe(MAX_QUERY_VARIANTS_PER_PATH)
    expect(f.add(`${O}/list`, 1)).toBe(true)
  })

  test('done and non-page URLs are known but not queued or counted', () => {
    const f = new Frontier(5, () => true)
    f.markDone(`${O}/done`)
    expect(f.add(`${O}/done`, 1)).toBe(false)
    f.add(`${O}/data`, 1)
    expect(f.size).toBe(2)
    f.notAPage(`${O}/data`)
    expect(f.size).toBe(1)
    expect(f.add(`${O}/data`, 1)).toBe(false)
  })
})
