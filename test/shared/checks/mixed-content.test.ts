import { describe, expect, test } from 'bun:test'
import { mixedContent } from '../../../shared/checks/https/mixed-content.ts'
import type { BrowserRequest } from '../../../shared/checks/types.ts'
import { makeArtifacts, request, SITE } from './artifacts.ts'

const run = (requests: BrowserRequest[], finalUrl = SITE) => mixedContent.run(makeArtifacts({ page: { finalUrl, requests } }))

describe('mixed-content', () => {
  test('passes when every request is https', () => {
    expect(run([request(SITE, 'document'), request('https://cdn.example/app.js', 'script')]).status).toBe('pass')
  })

  test('fails an http script and lists it', () => {
    const r = run([request('http://cdn.example/app.js', 'script')])
    expect(r.status).toBe('fail')
    expect(r.evidence.active).toEqual([{ url: 'http://cdn.example/app.js', resourceType: 'script' }])
  })

  test('fails ws: websockets, xhr and http iframes as active content', () => {
    expect(run([request('ws://live.example/socket', 'websocket')]).status).toBe('fail')
    expect(run([request('http://api.example/v1', 'fetch')]).status).toBe('fail')
    expect(run([request('http://embed.example/', 'document')]).status).toBe('fail')
  })

  test('warns for passive content only', () => {
    const r = run([request('http://img.example/a.png', 'image'), request('http://fonts.example/a.woff2', 'font')])
    expect(r.status).toBe('warn')
    expect(r.evidence.passiveCount).toBe(2)
  })

  test('counts a request the browser blocked, noting it', () => {
    const r = run([request('http://cdn.example/x.js', 'script', { status: 0, failure: 'net::ERR_BLOCKED_BY_CLIENT' })])
    expect(r.status).toBe('fail')
  })

  test('ignores http://localhost, which browsers treat as secure', () => {
    expect(run([request('http://localhost:3000/dev.js', 'script'), request('http://127.0.0.1/x.js', 'script')]).status).toBe('pass')
  })

  test('is skipped for an http page', () => {
    expect(run([request('http://cdn.example/a.js', 'script')], 'http://example.com/').status).toBe('skipped')
  })
})
