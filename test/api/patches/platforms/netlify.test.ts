// A Netlify patch against its fixture repository, and what is particular to the platform.
import { afterAll, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { patchFixture, removeRepos } from '../patch-repos.ts'

afterAll(removeRepos)

test('a Netlify patch applies to its fixture repository and netlify.toml parses with the headers block', async () => {
  const { dir, plan } = patchFixture('netlify')
  const toml = readFileSync(join(dir, 'netlify.toml'), 'utf8')
  expect(toml).toContain('[[headers]]')
  expect(toml).toContain('X-Content-Type-Options = "nosniff"')
  expect(toml).toContain('publish = "dist"')
  const parsed = Bun.TOML.parse(toml) as { headers: Array<{ for: string; values: Record<string, string> }> }
  expect(parsed.headers[0]!.values['X-Frame-Options']).toBe('DENY')
  expect(plan.edits.length).toBeGreaterThan(0)
})
