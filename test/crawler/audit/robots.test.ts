// robots.txt as RFC 9309 reads it: group choice, longest match, Allow on ties, wildcards, fetch outcomes.
import { describe, expect, test } from 'bun:test'
import { parseRobots, robotsFor, robotsForStatus } from '../../../crawler/audit/robots.ts'

const TOKEN = 'AppAudit'

describe('robots.txt rules (RFC 9309)', () => {
  test('uses the group naming our product token, case-insensitively, instead of *', () => {
    const r = robotsFor('User-agent: *\nDisallow: /\n\nUser-agent: appaudit\nDisallow: /admin\n', TOKEN)
    expect(r.isAllowed('/')).toBe(true)
    expect(r.isAllowed('/admin/users')).toBe(false)
  })

  test('falls back to the * group when no group names us, and allows everything without either', () => {
    expect(robotsFor('User-agent: OtherBot\nDisallow: /\n\nUser-agent: *\nDisallow: /tmp/\n', TOKEN).isAllowed('/tmp/x')).toBe(false)
    expect(robotsFor('User-agent: OtherBot\nDisallow: /\n', TOKEN).isAllowed('/anything')).toBe(true)
  })

  test('merges every group that names us', () => {
    const r = robotsFor('User-agent: AppAudit\nDisallow: /a\n\nUser-agent: *\nDisallow: /c\n\nUser-agent: AppAudit\nDisallow: /b\n', TOKEN)
    expect([r.isAllowed('/a'), r.isAllowed('/b'), r.isAllowed('/c')]).toEqual([false, false, true])
  })

  test('consecutive user-agent lines share one group', () => {
    const r = robotsFor('User-agent: OtherBot\nUser-agent: AppAudit\nDisallow: /x\n', TOKEN)
    expect(r.isAllowed('/x')).toBe(false)
  })

  test('the longest matching rule wins, and Allow wins a tie', () => {
    const r = robotsFor('User-agent: *\nDisallow: /private/\nAllow: /private/open\nAllow: /same\nDisallow: /same\n', TOKEN)
    expect(r.isAllowed('/private/secret')).toBe(false)
    expect(r.isAllowed('/private/open')).toBe(true)
    expect(r.isAllowed('/private/opener')).toBe(true)
    expect(r.isAllowed('/same')).toBe(true)
  })

  test('* matches any characters and $ anchors the end', () => {
    const r = robotsFor('User-agent: *\nDisallow: /*.php$\nDisallow: /search*q=\nAllow: /*.php$x\n', TOKEN)
    expect(r.isAllowed('/index.php')).toBe(false)
    expect(r.isAllowed('/index.php?x=1')).toBe(true)
    expect(r.isAllowed('/search/all?q=shoes')).toBe(false)
    expect(r.isAllowed('/search')).toBe(true)
  })

  test('rules match the query string too, and the match is case-sensitive', () => {
    const r = robotsFor('User-agent: *\nDisallow: /list?sort=\n', TOKEN)
    expect(r.isAllowed('/list?sort=asc')).toBe(false)
    expect(r.isAllowed('/list?page=2')).toBe(true)
    expect(r.isAllowed('/LIST?sort=asc')).toBe(true)
  })

  test('an empty Disallow disallows nothing; comments and unknown lines are ignored', () => {
    const r = robotsFor('# hello\nUser-agent: * # everyone\nDisallow:\nNoindex: /x\nDisallow: /y # not y\n', TOKEN)
    expect(r.isAllowed('/x')).toBe(true)
    expect(r.isAllowed('/y/z')).toBe(false)
  })

  test('percent-encoded and raw non-ASCII paths compare equal', () => {
    const r = robotsFor('User-agent: *\nDisallow: /café\n', TOKEN)
    expect(r.isAllowed(new URL('http://h/café/menu').pathname)).toBe(false)
    expect(r.isAllowed('/caf%c3%a9/menu')).toBe(false)
  })

  test('/robots.txt itself is always allowed', () => {
    expect(robotsFor('User-agent: *\nDisallow: /\n', TOKEN).isAllowed('/robots.txt')).toBe(true)
  })

  test('reads Sitemap lines anywhere and Crawl-delay of the chosen group', () => {
    const text =
      'Sitemap: https://h/a.xml\nUser-agent: *\nCrawl-delay: 2.5\nDisallow: /x\nsitemap: https://h/b.xml\n\nUser-agent: OtherBot\nCrawl-delay: 60\n'
    const r = robotsFor(text, TOKEN)
    expect(r.sitemaps).toEqual(['https://h/a.xml', 'https://h/b.xml'])
    expect(r.crawlDelayMs).toBe(2500)
    expect(parseRobots(text).groups).toHaveLength(2)
  })

  test('rules before any user-agent line belong to no group', () => {
    expect(robotsFor('Disallow: /\nUser-agent: *\nAllow: /\n', TOKEN).isAllowed('/a')).toBe(true)
  })

  test('a 4xx robots.txt allows everything; a 5xx or no answer disallows everything', () => {
    expect(robotsForStatus(404).isAllowed('/a')).toBe(true)
    expect(robotsForStatus(503).isAllowed('/a')).toBe(false)
    expect(robotsForStatus(null).isAllowed('/a')).toBe(false)
    expect(robotsForStatus(null).isAllowed('/robots.txt')).toBe(true)
  })
})
