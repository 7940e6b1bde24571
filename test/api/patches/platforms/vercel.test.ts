// A Vercel patch against its fixture repository, and what is particular to the platform.
import { afterAll, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { buildPatch, type RepoView } from '../../../../api/patches/builder.ts'
import { unifiedDiff } from '../../../../api/patches/diff.ts'
import { applyPatch, expectAdvisedCsp, finding, patchFixture, removeRepos, repoOf, SOURCE, view } from '../patch-repos.ts'

afterAll(removeRepos)

test('a Vercel patch applies to its fixture repository and vercel.json parses with the headers merged in', async () => {
  const { dir, plan } = patchFixture('vercel')
  const doc = JSON.parse(readFileSync(join(dir, 'vercel.json'), 'utf8'))
  expect(doc.cleanUrls).toBe(true)
  expect(doc.redirects).toHaveLength(1)
  const keys = doc.headers[0].headers.map((h: { key: string }) => h.key)
  expect(keys).toContain('Content-Security-Policy')
  expectAdvisedCsp(doc.headers[0].headers.find((h: { key: string }) => h.key === 'Content-Security-Policy').value)
  expect(plan.edits.length).toBeGreaterThan(0)
})

test('a second patch on top of the first merges into vercel.json headers instead of adding another rule', () => {
  const dir = repoOf('vercel')
  applyPatch(dir, unifiedDiff(buildPatch('vercel', SOURCE, view(dir)).edits))
  const again = buildPatch('vercel', { ...SOURCE, findings: [finding('x-content-type-options'), finding('referrer-policy')] }, view(dir))
  const doc = JSON.parse(again.edits[0]!.after)
  expect(doc.headers).toHaveLength(1)
  expect(doc.headers[0].headers.filter((h: { key: string }) => h.key === 'X-Content-Type-Options')).toHaveLength(1)
})

test('a vercel.json that is not a JSON object is left alone and explained', () => {
  const repo: RepoView = { paths: ['vercel.json'], read: (p) => (p === 'vercel.json' ? '[1, 2' : null) }
  const plan = buildPatch('vercel', SOURCE, repo)
  expect(plan.edits).toHaveLength(0)
  expect(plan.notFixed.find((n) => n.checkId === 'csp')?.why).toContain('not a JSON object')
})

test('HSTS is not proposed for an http page', () => {
  const plan = buildPatch('vercel', { ...SOURCE, url: 'http://app.example.com/' })
  expect(plan.notFixed.find((n) => n.checkId === 'hsts')?.why).toContain('https')
  expect(plan.edits[0]!.after).not.toContain('Strict-Transport-Security')
})
