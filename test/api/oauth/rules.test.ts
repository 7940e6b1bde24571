// The pure rules of the authorization server: PKCE S256 (RFC 7636) and redirect URIs (RFC 8252, 9700).
import { describe, expect, test } from 'bun:test'
import { s256, verifierMatches } from '../../../api/oauth/pkce.ts'
import { matchRedirectUri, redirectDisplay, redirectUriProblem } from '../../../api/oauth/redirect-uris.ts'
import { register } from '../../../api/oauth/register.ts'
import type { Sql } from '../../../shared/db/index.ts'

describe('PKCE S256', () => {
  test('matches the example of RFC 7636 appendix B', () => {
    const verifier = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk'
    const challenge = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'
    expect(s256(verifier)).toBe(challenge)
    expect(verifierMatches(verifier, challenge)).toBe(true)
    expect(verifierMatches(`${verifier.slice(0, -1)}l`, challenge)).toBe(false)
  })

  test('refuses a verifier outside 43-128 characters of [A-Za-z0-9._~-], even when its hash matches', () => {
    for (const v of ['a'.repeat(42), 'a'.repeat(129), `${'a'.repeat(43)} `, `${'a'.repeat(43)}/`]) {
      expect(verifierMatches(v, s256(v))).toBe(false)
    }
    expect(verifierMatches('a'.repeat(128), s256('a'.repeat(128)))).toBe(true)
  })

  test('refuses a verifier against a plain challenge equal to itself', () => {
    const v = 'a'.repeat(43)
    expect(verifierMatches(v, v)).toBe(false)
  })
})

describe('redirect URIs', () => {
  test('loopback http matches on any port but the same host, path and query', () => {
    const reg = ['http://127.0.0.1/cb?x=1', 'http://[::1]:80/cb', 'https://app.example/cb']
    expect(matchRedirectUri(reg, 'http://127.0.0.1:61000/cb?x=1')).toBe('http://127.0.0.1/cb?x=1')
    expect(matchRedirectUri(reg, 'http://[::1]:5555/cb')).toBe('http://[::1]:80/cb')
    expect(matchRedirectUri(reg, 'http://127.0.0.1:61000/cb')).toBeNull()
    expect(matchRedirectUri(reg, 'http://localhost:61000/cb?x=1')).toBeNull()
    expect(matchRedirectUri(reg, 'https://app.example:8443/cb')).toBeNull()
    expect(matchRedirectUri(reg, 'https://APP.example/cb')).toBeNull()
  })

  test('native app schemes are allowed, browser-dangerous ones are not', () => {
    expect(redirectUriProblem('cursor://anysphere.cursor-retrieval/oauth/user-callback')).toBeNull()
    expect(redirectUriProblem('com.example.app:/oauth2redirect')).toBeNull()
    for (const bad of ['javascript://x/%0aalert(1)', 'file:///etc/passwd', 'vbscript:x', 'blob:https://a/b', 'http://10.0.0.1/cb']) {
      expect(redirectUriProblem(bad)).not.toBeNull()
    }
  })

  test('a redirect URI with a user name or password is refused (it shows a host that is not the destination)', () => {
    for (const bad of ['https://trusted.example@evil.example/cb', 'https://u:p@app.example/cb', 'http://x@127.0.0.1/cb']) {
      expect(redirectUriProblem(bad)).toContain('must not carry a user name or password')
    }
  })

  test('a client name with control or bidirectional formatting characters is refused at registration', async () => {
    const noDatabase = null as unknown as Sql
    for (const name of ['Good\u202eTNEGA', 'a\u2066b', 'tab\there', 'nul\u0000', 'rlm\u200f']) {
      const r = await register(noDatabase, { client_name: name, redirect_uris: ['https://app.example/cb'] })
      expect(r).toEqual({
        error: 'invalid_client_metadata',
        description: 'client_name must not contain control or bidirectional formatting characters',
      })
    }
  })

  test('the consent page shows the host, or says an application will open', () => {
    expect(redirectDisplay('https://agent.example:8443/cb')).toBe('agent.example:8443')
    expect(redirectDisplay('cursor://anysphere.cursor-retrieval/cb')).toContain('cursor://')
  })
})
