import { describe, expect, test } from 'bun:test'
import { CHECKS, CHECKS_VERSION, getCheck } from '../../../shared/checks/registry.ts'

const EXPECTED_IDS = [
  'csp',
  'hsts',
  'x-content-type-options',
  'frame-protection',
  'referrer-policy',
  'cookie-secure',
  'cookie-httponly',
  'cookie-samesite',
  'https-redirect',
  'mixed-content',
  'version-disclosure',
  'exposed-env-file',
  'exposed-git-config',
  'js-secrets',
  'tls-certificate',
  'tls-protocol',
  'permissions-policy',
  'cross-origin-isolation',
  'cors-credentialed-reflection',
  'cors-wildcard-api',
  'subresource-integrity',
  'exposed-source-maps',
  'exposed-agent-instructions',
  'exposed-package-manifest',
  'exposed-framework-config',
  'directory-listing',
  'debug-error-page',
  'vulnerable-js-library',
  'seo-title',
  'seo-meta-description',
  'seo-lang',
  'seo-viewport',
  'seo-indexable',
  'seo-canonical',
  'perf-page-weight',
  'perf-request-count',
  'perf-compression',
  'perf-caching',
  'perf-timing',
  'accessibility',
  'third-party-requests',
  'third-party-cookies',
  'exposed-backup-files',
  'exposed-metadata-files',
  'exposed-infra-files',
  'exposed-log-files',
  'server-info-page',
  'page-secrets',
  'end-of-life-software',
  'api-data-exposure',
  'exposed-api-docs',
  'password-form',
  'web-app-exposure',
]

describe('check registry', () => {
  test('registers exactly the expected check ids, each once (stable ids are part of the contract)', () => {
    const ids: string[] = CHECKS.map((c) => c.id)
    expect(new Set(ids).size).toBe(ids.length)
    expect([...ids].sort()).toEqual([...EXPECTED_IDS].sort())
  })

  test('ids are kebab-case', () => {
    for (const c of CHECKS) expect(c.id).toMatch(/^[a-z0-9]+(?:-[a-z0-9]+)*$/)
  })

  test('every check documents why, how it is confirmed, and a fix for every platform', () => {
    for (const c of CHECKS) {
      for (const field of [c.title, c.description, c.why, c.confirmation]) expect(field.length).toBeGreaterThan(10)
      for (const platform of ['generic', 'vercel', 'netlify', 'nextjs', 'nginx', 'cloudflare'] as const) {
        expect(c.fix[platform]?.length ?? 0).toBeGreaterThan(10)
      }
      expect(c.requires.length).toBeGreaterThan(0)
    }
  })

  test('lives in the folder of its category', async () => {
    const glob = new Bun.Glob('shared/checks/*/*.ts')
    const files = [...glob.scanSync({ cwd: `${import.meta.dir}/../../..` })].filter((f) => !f.includes('/util/'))
    for (const c of CHECKS) expect(files).toContain(`shared/checks/${c.category}/${c.id}.ts`)
  })

  test('getCheck finds a check by id and returns undefined for an unknown id', () => {
    expect(getCheck('hsts')?.title).toBe('Strict-Transport-Security is set')
    expect(getCheck('no-such-check')).toBeUndefined()
  })

  test('has a checks version', () => {
    expect(CHECKS_VERSION).toMatch(/^\d{4}\.\d+\.\d+$/)
  })
})
