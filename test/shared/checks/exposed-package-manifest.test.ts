import { describe, expect, test } from 'bun:test'
import {
  exposedPackageManifest,
  readComposerJson,
  readNpmrc,
  readPackageJson,
} from '../../../shared/checks/exposure/exposed-package-manifest.ts'
import { BASELINE_PROBE } from '../../../shared/checks/probe-paths.ts'
import type { ProbeResult } from '../../../shared/checks/types.ts'
import { makeArtifacts, noise, probe, SPA_HTML } from './artifacts.ts'

const PACKAGE_JSON = JSON.stringify({
  name: '@acme/shop',
  version: '1.4.0',
  private: true,
  scripts: { build: 'vite build', start: 'node server.js' },
  dependencies: { react: '^19.0.0', 'react-dom': '^19.0.0', express: '4.18.2' },
  devDependencies: { vite: '^7.0.0', typescript: '^5.9.0' },
})

const COMPOSER_JSON = JSON.stringify({
  name: 'acme/shop',
  type: 'project',
  require: { php: '^8.2', 'laravel/framework': '^11.0', 'guzzlehttp/guzzle': '^7.8' },
  'require-dev': { 'phpunit/phpunit': '^11.0' },
  autoload: { 'psr-4': { 'App\\': 'app/' } },
})

const run = (probes: Record<string, ProbeResult>) =>
  exposedPackageManifest.run(makeArtifacts({ probes: { [BASELINE_PROBE]: probe(BASELINE_PROBE, SPA_HTML, 200, 'text/html'), ...probes } }))

describe('exposed-package-manifest', () => {
  test('fails a served package.json, medium, with name and dependency counts', () => {
    const r = run({ '/package.json': probe('/package.json', PACKAGE_JSON, 200, 'application/json') })
    expect(r.status).toBe('fail')
    expect(r.severity).toBe('medium')
    expect(r.evidence.files).toEqual([
      {
        path: '/package.json',
        url: 'https://example.com/package.json',
        status: 200,
        contentType: 'application/json',
        name: '@acme/shop',
        version: '1.4.0',
        dependencies: 3,
        devDependencies: 2,
      },
    ])
    expect(r.summary).toBe('/package.json is served (@acme/shop, 5 dependencies).')
  })

  test('fails a served composer.json', () => {
    const r = run({ '/composer.json': probe('/composer.json', COMPOSER_JSON, 200, 'application/json') })
    expect(r.status).toBe('fail')
    expect(r.evidence.files).toMatchObject([{ path: '/composer.json', name: 'acme/shop', dependencies: 3, devDependencies: 1 }])
  })

  test('an .npmrc with a literal auth token is critical, the token redacted', () => {
    const token = `npm_${noise(36, 21)}`
    const npmrc = `; project npm config\n@acme:registry=https://npm.pkg.github.com\n//npm.pkg.github.com/:_authToken=${token}\nsave-exact=true\n`
    const r = run({ '/.npmrc': probe('/.npmrc', npmrc) })
    expect(r.status).toBe('fail')
    expect(r.severity).toBe('critical')
    expect(r.evidence.files).toMatchObject([
      {
        path: '/.npmrc',
        registries: ['https://npm.pkg.github.com'],
        tokens: [{ key: '//npm.pkg.github.com/:_authToken', redacted: `${token.slice(0, 8)}…${token.slice(-4)}` }],
        tokensFromEnvironment: 0,
      },
    ])
    expect(JSON.stringify(r)).not.toContain(token)
    expect(r.summary).toContain('holds a registry token')
  })

  test('an .npmrc reading its token from the environment is medium', () => {
    const r = run({ '/.npmrc': probe('/.npmrc', 'registry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken=${NPM_TOKEN}\n') })
    expect(r.status).toBe('fail')
    expect(r.severity).toBe('medium')
    expect(r.evidence.files).toMatchObject([{ tokens: [], tokensFromEnvironment: 1 }])
  })

  test('a provider secret inside package.json makes it critical, and the summary says a credential is there', () => {
    const key = `sk_live_${noise(30, 22)}`
    const pkg = JSON.stringify({ name: 'shop', version: '1.0.0', scripts: { seed: `STRIPE_KEY=${key} node seed.js` } })
    const r = run({ '/package.json': probe('/package.json', pkg) })
    expect(r.severity).toBe('critical')
    expect(r.summary).toContain('/package.json holds a credential: stripe-secret-key')
    expect(JSON.stringify(r)).not.toContain(key)
  })

  test('passes a JSON error body at /package.json', () => {
    expect(run({ '/package.json': probe('/package.json', '{"error":"not found"}', 404, 'application/json') }).status).toBe('pass')
    expect(run({ '/package.json': probe('/package.json', '{"error":"not found"}', 200, 'application/json') }).status).toBe('pass')
  })

  test('passes JSON that is not a manifest: a web app manifest, an array, a name alone', () => {
    expect(readPackageJson(JSON.stringify({ name: 'Shop', short_name: 'Shop', icons: [], start_url: '/' }))).toBeNull()
    expect(readPackageJson('[{"name":"x","dependencies":{}}]')).toBeNull()
    expect(readPackageJson('{"name":"x"}')).toBeNull()
    expect(readComposerJson('{"name":"acme/x"}')).toBeNull()
    expect(readComposerJson(PACKAGE_JSON)).toBeNull()
  })

  test('passes index.html and text that is not an npm config', () => {
    expect(
      run({ '/package.json': probe('/package.json', SPA_HTML, 200, 'text/html'), '/.npmrc': probe('/.npmrc', SPA_HTML, 200, 'text/html') })
        .status,
    ).toBe('pass')
    expect(readNpmrc('NODE_ENV=production\nPORT=3000\n')).toBeNull()
    expect(readNpmrc('Not Found')).toBeNull()
    expect(readNpmrc('hello = world\nfoo = bar\n')).toBeNull()
  })
})
