// A Cloudflare Pages patch against its fixture repository, and what is particular to the platform.
import { afterAll, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { patchFixture, removeRepos } from '../patch-repos.ts'

afterAll(removeRepos)

test('a Cloudflare Pages patch applies to its fixture repository and public/_headers sets the headers on every path', async () => {
  const { dir, plan } = patchFixture('cloudflare')
  const h = readFileSync(join(dir, 'public/_headers'), 'utf8')
  expect(h).toContain('/*\n  ')
  expect(h).toContain('  Strict-Transport-Security: max-age=63072000; includeSubDomains')
  expect(plan.edits.length).toBeGreaterThan(0)
})
