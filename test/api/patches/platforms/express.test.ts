// An Express patch against its fixture repository, and what is particular to the platform.
import { afterAll, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { patchFixture, removeRepos } from '../patch-repos.ts'

afterAll(removeRepos)

test('an Express patch applies to its fixture repository and the middleware runs, sets the headers and the cookie attributes', async () => {
  const { dir, plan } = patchFixture('express')
  const server = readFileSync(join(dir, 'src/server.js'), 'utf8')
  expect(server).toContain("const securityHeaders = require('./security-headers.js')")
  expect(server).toContain('app.use(securityHeaders)')
  expect(server).toContain("app.disable('x-powered-by')")
  const mw = (await import(join(dir, 'src/security-headers.js'))).default
  const set: Record<string, string> = {}
  const cookies: unknown[] = []
  const res = {
    setHeader: (k: string, v: string) => {
      set[k] = v
    },
    cookie: (...a: unknown[]) => cookies.push(a),
  }
  let nexted = false
  mw({ secure: true, get: () => 'https' }, res, () => {
    nexted = true
  })
  expect(nexted).toBe(true)
  expect(set['X-Content-Type-Options']).toBe('nosniff')
  ;(res.cookie as (n: string, v: string) => void)('session', 'abc')
  expect(cookies[0]).toEqual(['session', 'abc', { secure: true, httpOnly: true }])
  expect(plan.edits.length).toBeGreaterThan(0)
})
