import { describe, expect, test } from 'bun:test'
import { parsePermissionsPolicy, permissionsPolicy } from '../../../shared/checks/security/permissions-policy.ts'
import { makeArtifacts, SPA_HTML, withHeaders } from './artifacts.ts'

const run = (headers: Record<string, string | null>, html = SPA_HTML) =>
  permissionsPolicy.run(makeArtifacts({ mainResponse: withHeaders(headers), page: { html } }))

describe('permissions-policy parser', () => {
  test('reads empty, self, origin and wildcard allowlists', () => {
    const parsed = parsePermissionsPolicy('camera=(), geolocation=(self "https://maps.example.com"), microphone=*, usb=(*)')
    expect(parsed.ok).toBe(true)
    if (!parsed.ok) return
    expect(parsed.features.get('camera')).toEqual({ all: false, self: false, origins: [] })
    expect(parsed.features.get('geolocation')).toEqual({ all: false, self: true, origins: ['https://maps.example.com'] })
    expect(parsed.features.get('microphone')!.all).toBe(true)
    expect(parsed.features.get('usb')!.all).toBe(true)
  })

  test('rejects Feature-Policy syntax, which browsers drop as a whole', () => {
    const parsed = parsePermissionsPolicy("camera 'none'; microphone 'none'")
    expect(parsed.ok).toBe(false)
    if (!parsed.ok) expect(parsed.error).toContain('Feature-Policy syntax')
  })

  test('ignores a member that is not an allowlist but keeps the rest', () => {
    const parsed = parsePermissionsPolicy('camera, microphone=()')
    expect(parsed.ok).toBe(true)
    if (parsed.ok) {
      expect(parsed.ignored).toEqual(['camera'])
      expect([...parsed.features.keys()]).toEqual(['microphone'])
    }
  })

  test('rejects a trailing comma and upper-case names', () => {
    expect(parsePermissionsPolicy('camera=(),').ok).toBe(false)
    expect(parsePermissionsPolicy('Camera=()').ok).toBe(false)
  })

  test('accepts parameters and repeated headers joined with a comma', () => {
    const parsed = parsePermissionsPolicy('camera=();report-to=main, geolocation=(self)')
    expect(parsed.ok && parsed.features.size).toBe(2)
  })
})

describe('permissions-policy check', () => {
  test('passes a policy that disables powerful features', () => {
    const r = run({ 'permissions-policy': 'camera=(), microphone=(), geolocation=(self)' })
    expect(r.status).toBe('pass')
    expect(r.evidence.disabled).toEqual(['camera', 'microphone'])
  })

  test('warns when the header is missing', () => {
    const r = run({})
    expect(r.status).toBe('warn')
    expect(r.evidence.header).toBeNull()
  })

  test('warns when only the deprecated Feature-Policy is sent', () => {
    const r = run({ 'feature-policy': "camera 'none'; geolocation *" })
    expect(r.status).toBe('warn')
    expect(r.summary).toContain('deprecated')
    expect(r.evidence.featurePolicyOpenToAll).toEqual(['geolocation'])
  })

  test('reports powerful features allowed to every origin as info, not a finding', () => {
    const r = run({ 'permissions-policy': 'camera=*, microphone=(*), geolocation=(), fullscreen=*' })
    expect(r.status).toBe('info')
    expect(r.evidence.openToAll).toEqual(['camera', 'microphone'])
  })

  test('does not list harmless features allowed to every origin', () => {
    expect(run({ 'permissions-policy': 'fullscreen=*, camera=()' }).status).toBe('pass')
  })

  test('warns when the header does not parse, since browsers then ignore it entirely', () => {
    const r = run({ 'permissions-policy': "geolocation 'none'" })
    expect(r.status).toBe('warn')
    expect(String(r.evidence.error)).toContain('Feature-Policy syntax')
  })

  test('warns when the header restricts nothing', () => {
    expect(run({ 'permissions-policy': '' }).status).toBe('warn')
  })

  test('does not count a <meta> policy, which browsers do not support, but reports it', () => {
    const r = run({}, '<html><head><meta http-equiv="Permissions-Policy" content="camera=()"></head></html>')
    expect(r.status).toBe('warn')
    expect(r.evidence.meta).toEqual(['camera=()'])
  })

  test('passes with both headers and notes that Feature-Policy can go', () => {
    const r = run({ 'permissions-policy': 'camera=()', 'feature-policy': "camera 'none'" })
    expect(r.status).toBe('pass')
    expect(String(r.evidence.note)).toContain('removed')
  })
})

describe('permissions-policy metadata', () => {
  test('documents why, how it is confirmed, and a fix for every platform', () => {
    for (const field of [permissionsPolicy.title, permissionsPolicy.description, permissionsPolicy.why, permissionsPolicy.confirmation])
      expect(field.length).toBeGreaterThan(10)
    for (const platform of ['generic', 'vercel', 'netlify', 'nextjs', 'nginx', 'cloudflare'] as const) {
      expect(permissionsPolicy.fix[platform]?.length ?? 0).toBeGreaterThan(10)
    }
  })
})
