import { describe, expect, test } from 'bun:test'
import { seoLang } from '../../../shared/checks/seo/seo-lang.ts'
import { makeArtifacts } from './artifacts.ts'
import { runCheck } from '../../../shared/checks/runner.ts'

const run = (htmlTag: string) =>
  seoLang.run(makeArtifacts({ page: { html: `${htmlTag}<head><title>T</title></head><body></body></html>` } }))

describe('seo-lang', () => {
  test('warns on the SPA shell, whose <html> has no lang', () => {
    const r = seoLang.run(makeArtifacts())
    expect(r.status).toBe('warn')
    expect(r.evidence.lang).toBeNull()
  })

  test('passes well-formed language tags', () => {
    for (const lang of ['en', 'en-GB', 'zh-Hant-TW', 'de-CH']) expect(run(`<html lang="${lang}">`).status).toBe('pass')
    expect(run('<html class="dark" LANG=fr>').status).toBe('pass')
  })

  test('warns on an empty or malformed lang, suggesting the hyphenated form', () => {
    expect(run('<html lang="">').status).toBe('warn')
    const r = run('<html lang="en_US">')
    expect(r.status).toBe('warn')
    expect(r.summary).toContain('en-US')
    expect(run('<html lang="english language">').status).toBe('warn')
  })

  test('is skipped without a page', () => {
    expect(runCheck(seoLang, makeArtifacts({ page: null })).status).toBe('skipped')
  })
})
