// An Apache patch against its fixture repository, and what is particular to the platform.
import { afterAll, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { patchFixture, removeRepos } from '../patch-repos.ts'

afterAll(removeRepos)

test('an Apache patch applies to its fixture repository and .htaccess keeps its lines and gains the headers, redirect and cookie edits', async () => {
  const { dir, plan } = patchFixture('apache')
  const h = readFileSync(join(dir, 'public/.htaccess'), 'utf8')
  expect(h).toStartWith('Options -Indexes\n')
  expect(h).toContain('Header always set X-Content-Type-Options "nosniff"')
  expect(h).toContain('RewriteRule ^ https://%{HTTP_HOST}%{REQUEST_URI} [L,R=301]')
  expect(h).toContain('"$1; Secure"')
  expect(plan.edits.length).toBeGreaterThan(0)
})
