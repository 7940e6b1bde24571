import { describe, expect, test } from 'bun:test'
import { versionDisclosure, versionIn } from '../../../shared/checks/security/version-disclosure.ts'
import { makeArtifacts, SPA_HTML, withHeaders } from './artifacts.ts'

const run = (headers: Record<string, string | null>, html = SPA_HTML) =>
  versionDisclosure.run(makeArtifacts({ mainResponse: withHeaders(headers), page: { html } }))

describe('version-disclosure', () => {
  test('passes a Server header without a version and shows it in evidence', () => {
    for (const server of ['nginx', 'cloudflare', 'Vercel', 'AmazonS3']) {
      const r = run({ server })
      expect(r.status).toBe('pass')
      expect(r.evidence.server).toBe(server)
    }
  })

  test('fails a Server header with a version', () => {
    const r = run({ server: 'Apache/2.4.41 (Ubuntu)' })
    expect(r.status).toBe('fail')
    expect(r.evidence.disclosures).toEqual([{ name: 'Server', value: 'Apache/2.4.41 (Ubuntu)', version: '2.4.41' }])
  })

  test('fails X-Powered-By with a version and X-AspNet-Version', () => {
    expect(run({ 'x-powered-by': 'PHP/8.1.2' }).status).toBe('fail')
    expect(run({ 'x-aspnet-version': '4.0.30319' }).status).toBe('fail')
  })

  test('warns for X-Powered-By naming a product without a version', () => {
    const r = run({ 'x-powered-by': 'Next.js' })
    expect(r.status).toBe('warn')
    expect(r.evidence.disclosures).toEqual([{ name: 'x-powered-by', value: 'Next.js', version: null }])
  })

  test('fails a generator meta tag with a version', () => {
    expect(run({}, '<meta name="generator" content="WordPress 6.4.2">').status).toBe('fail')
  })

  test('passes a generator meta tag without a version', () => {
    expect(run({}, '<meta name="generator" content="Wix.com Website Builder">').status).toBe('pass')
  })

  test('ignores version numbers in asset file names', () => {
    expect(run({}, '<script src="/jquery-3.6.0.min.js"></script>').status).toBe('pass')
  })

  test('reads versions from product strings', () => {
    expect(versionIn('nginx/1.18.0')).toBe('1.18.0')
    expect(versionIn('Microsoft-IIS/10.0')).toBe('10.0')
    expect(versionIn('PHP/8')).toBe('8')
    expect(versionIn('Express')).toBeNull()
  })
})
