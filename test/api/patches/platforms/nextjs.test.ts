// A Next.js patch against its fixture repository, and what is particular to the platform.
import { afterAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import { expectAdvisedCsp, patchFixture, removeRepos } from '../patch-repos.ts'

afterAll(removeRepos)

test('a Next.js patch applies to its fixture repository and next.config.js loads and its headers() returns the headers', async () => {
  const { dir, plan } = patchFixture('nextjs')
  const mod = await import(join(dir, 'next.config.js'))
  const cfg = mod.default ?? mod
  expect(cfg.reactStrictMode).toBe(true)
  expect(cfg.poweredByHeader).toBe(false)
  const rules = await cfg.headers()
  expect(rules[0].source).toBe('/:path*')
  expectAdvisedCsp(rules[0].headers.find((h: { key: string }) => h.key === 'Content-Security-Policy').value)
  expect(plan.edits.length).toBeGreaterThan(0)
})
