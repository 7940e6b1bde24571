import { describe, expect, test } from 'bun:test'
import { seoViewport } from '../../../shared/checks/seo/seo-viewport.ts'
import { makeArtifacts } from './artifacts.ts'
import { runCheck } from '../../../shared/checks/runner.ts'

const run = (head: string) =>
  seoViewport.run(makeArtifacts({ page: { html: `<html lang="en"><head><title>T</title>${head}</head><body></body></html>` } }))

describe('seo-viewport', () => {
  test('warns on the SPA shell, which has no viewport', () => {
    expect(seoViewport.run(makeArtifacts()).status).toBe('warn')
  })

  test('passes width=device-width, initial-scale=1 and equivalents', () => {
    expect(run('<meta name="viewport" content="width=device-width, initial-scale=1">').status).toBe('pass')
    expect(run('<meta name="viewport" content="initial-scale=1.0">').status).toBe('pass')
  })

  test('warns when the viewport sets neither width nor initial-scale, and reports zoom restrictions', () => {
    const r = run('<meta name="viewport" content="user-scalable=no">')
    expect(r.status).toBe('warn')
    expect(r.evidence.zoomRestricted).toBe(true)
    const zoom = run('<meta name="viewport" content="width=device-width, maximum-scale=1">')
    expect(zoom.status).toBe('pass')
    expect(zoom.evidence.zoomRestricted).toBe(true)
  })

  test('is skipped without a page', () => {
    expect(runCheck(seoViewport, makeArtifacts({ page: null })).status).toBe('skipped')
  })
})
