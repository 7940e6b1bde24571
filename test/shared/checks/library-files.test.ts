// The vendors' own builds, as npm ships them (test/fixtures/libraries, fetched by its fetch.ts): each is
// named by its content with its version, served under a name that says nothing; and a file whose content
// says nothing is named by its CDN address, its RetireJS hash or its file name.
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { gunzipSync } from 'node:zlib'
import { vulnerableJsLibrary } from '../../../shared/checks/security/vulnerable-js-library.ts'
import { LIBRARIES } from '../../fixtures/libraries/fetch.ts'
import { makeArtifacts } from './artifacts.ts'

const DIR = join(import.meta.dir, '../../fixtures/libraries')

/** Where the vendor's build says another version than its package (protobufjs 6.10.0 ships the 6.9.0 dist). */
const SHIPPED_VERSION: Record<string, string> = { 'protobufjs@6.10.0': '6.9.0' }

type Detected = Array<{ library: string; version: string; detectedBy: string }>
const detectedIn = (url: string, body: string) =>
  (vulnerableJsLibrary.run(makeArtifacts({ scripts: [{ url, inline: false, body }] })).evidence.detected as Detected).map(
    (d) => `${d.version}/${d.detectedBy}`,
  )

describe('libraries as their vendors ship them', () => {
  test('each build is named by its content, with its version, under a file name that says nothing', () => {
    for (const [pkg, version] of LIBRARIES) {
      const body = gunzipSync(readFileSync(join(DIR, `${pkg}-${version}.js.gz`))).toString('utf8')
      const expected = SHIPPED_VERSION[`${pkg}@${version}`] ?? version
      const found = detectedIn('https://shop.test/assets/vendor-3f2a.js', body)
      expect({ pkg, found: found.filter((f) => f.startsWith(`${expected}/`)).length > 0 }).toEqual({ pkg, found: true })
      expect({ pkg, bySource: found.every((f) => /\/(?:banner|content)$/.test(f)) }).toEqual({ pkg, bySource: true })
    }
  })

  test('a file whose content names nothing is named by its CDN address', () => {
    for (const [pkg, version, file] of LIBRARIES) {
      const found = detectedIn(`https://cdn.jsdelivr.net/npm/${pkg}@${version}/${file}`, '/* built */ (function(){})();')
      expect({ pkg, found }).toEqual({ pkg, found: [`${version}/uri`] })
    }
    expect(detectedIn('https://cdnjs.cloudflare.com/ajax/libs/handlebars.js/4.0.11/handlebars.min.js', '')).toEqual(['4.0.11/uri'])
    expect(detectedIn('https://unpkg.com/dompurify@2.0.7/dist/purify.min.js', '')).toEqual(['2.0.7/uri'])
  })

  test("RetireJS's own URI and file-name patterns speak only when the content says nothing", () => {
    // A self-hosted file named as RetireJS knows it, content stripped of any banner.
    expect(detectedIn('https://shop.test/js/jquery-3.4.1.min.js', '(function(){})();')).toEqual(['3.4.1/filename'])
    // The content wins over the name: a file named 3.4.1 that holds 3.7.1 is 3.7.1.
    const jquery = gunzipSync(readFileSync(join(DIR, 'jquery-3.4.1.js.gz'))).toString('utf8')
    expect(detectedIn('https://shop.test/js/jquery-1.2.0.min.js', jquery)).toEqual(['3.4.1/banner'])
    // Inline scripts have no address.
    const r = vulnerableJsLibrary.run(makeArtifacts({ scripts: [{ url: 'https://shop.test/#inline-1', inline: true, body: '' }] }))
    expect(r.evidence.detected).toEqual([])
  })
})
