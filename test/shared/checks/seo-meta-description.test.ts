import { describe, expect, test } from 'bun:test'
import { seoMetaDescription } from '../../../shared/checks/seo/seo-meta-description.ts'
import { makeArtifacts } from './artifacts.ts'
import { runCheck } from '../../../shared/checks/runner.ts'

const run = (head: string) =>
  seoMetaDescription.run(makeArtifacts({ page: { html: `<html lang="en"><head><title>T</title>${head}</head><body></body></html>` } }))

describe('seo-meta-description', () => {
  test('warns on the SPA shell, which has none', () => {
    const r = seoMetaDescription.run(makeArtifacts())
    expect(r.status).toBe('warn')
    expect(r.summary).toContain('no meta description')
  })

  test('passes a description, with its length', () => {
    const r = run('<meta name="description" content="Invoices for freelancers &amp; small teams.">')
    expect(r.status).toBe('pass')
    expect(r.evidence).toMatchObject({ description: 'Invoices for freelancers & small teams.', length: 39 })
  })

  test('warns when the description is empty', () => {
    expect(run('<meta name="Description" content="  ">').status).toBe('warn')
  })

  test('is skipped without a page', () => {
    expect(runCheck(seoMetaDescription, makeArtifacts({ page: null })).status).toBe('skipped')
  })
})
