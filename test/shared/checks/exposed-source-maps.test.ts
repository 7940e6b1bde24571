import { describe, expect, test } from 'bun:test'
import { exposedSourceMaps, readSourceMap } from '../../../shared/checks/exposure/exposed-source-maps.ts'
import { BASELINE_PROBE } from '../../../shared/checks/probe-paths.ts'
import type { ProbeResult } from '../../../shared/checks/types.ts'
import { makeArtifacts, probe, SPA_HTML } from './artifacts.ts'

const MAP_PATH = '/assets/index-3f2a.js.map'
const map = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    version: 3,
    file: 'index-3f2a.js',
    sources: ['../src/main.tsx', '../src/App.tsx', '../src/api/client.ts'],
    names: [],
    mappings: 'AAAA,SAASA',
    ...extra,
  })

const run = (maps: ProbeResult[], page: 'loaded' | null = 'loaded') =>
  exposedSourceMaps.run(makeArtifacts({ sourceMaps: maps, ...(page === null ? { page: null } : {}) }))

describe('exposed-source-maps', () => {
  test('fails a served map listing sources, medium without sourcesContent', () => {
    const r = run([probe(MAP_PATH, map(), 200, 'application/json')])
    expect(r.status).toBe('fail')
    expect(r.severity).toBe('medium')
    expect(r.evidence.maps).toEqual([
      {
        url: 'https://example.com/assets/index-3f2a.js.map',
        status: 200,
        contentType: 'application/json',
        sources: 3,
        sourcesContent: false,
        sampleSources: ['../src/main.tsx', '../src/App.tsx', '../src/api/client.ts'],
      },
    ])
  })

  test('is high when sourcesContent embeds the original source', () => {
    const r = run([
      probe(MAP_PATH, map({ sourcesContent: ['import App from "./App"', null, 'export const api = 1'] }), 200, 'application/json'),
    ])
    expect(r.status).toBe('fail')
    expect(r.severity).toBe('high')
    expect(r.evidence).toMatchObject({ withSourcesContent: 1 })
    expect(r.summary).toContain('embed the original source')
  })

  test('sourcesContent made only of nulls is not embedded source', () => {
    expect(readSourceMap(map({ sourcesContent: [null, null, null] }))?.sourcesContent).toBe(false)
  })

  test('recognises a map cut at the probe size limit, counting the sources it can read', () => {
    const sources = Array.from({ length: 40 }, (_, i) => `webpack://app/./src/module-${i}.ts`)
    const full = JSON.stringify({
      version: 3,
      sources,
      sourcesContent: sources.map((s) => `// ${s}\n${'x'.repeat(5_000)}`),
      mappings: 'AAAA',
    })
    const cut = full.slice(0, 65_536)
    expect(() => JSON.parse(cut)).toThrow()
    expect(readSourceMap(cut)).toEqual({ sources: 40, sourcesAtLeast: false, sourcesContent: true, sample: sources.slice(0, 5) })
    const cutInSources = full.slice(0, 600)
    expect(readSourceMap(cutInSources)).toMatchObject({ sourcesAtLeast: true, sourcesContent: false })
  })

  test('reads index maps with sections and the XSSI prefix', () => {
    const indexMap = JSON.stringify({
      version: 3,
      sections: [
        { offset: { line: 0, column: 0 }, map: JSON.parse(map()) },
        { offset: { line: 9, column: 0 }, map: JSON.parse(map({ sources: ['b.ts'] })) },
      ],
    })
    expect(readSourceMap(indexMap)?.sources).toBe(4)
    expect(readSourceMap(`)]}'\n${map()}`)?.sources).toBe(3)
  })

  test('passes a map URL that answers index.html, a 404 page or a JSON error', () => {
    expect(run([probe(MAP_PATH, SPA_HTML, 200, 'text/html')]).status).toBe('pass')
    expect(run([probe(MAP_PATH, 'Not Found', 404)]).status).toBe('pass')
    expect(run([probe(MAP_PATH, '{"error":"not found"}', 404, 'application/json')]).status).toBe('pass')
  })

  test('passes JSON that is not a revision 3 source map', () => {
    expect(readSourceMap(JSON.stringify({ version: 2, sources: [], mappings: '' }))).toBeNull()
    expect(readSourceMap(JSON.stringify({ version: 3, names: [] }))).toBeNull()
    expect(readSourceMap('{"version":3,"file":"x"')).toBeNull()
    expect(readSourceMap('// not json')).toBeNull()
  })

  test('passes an answer that is the catch-all for unknown paths', () => {
    const catchAll = '{"version":3,"sources":["catch-all"],"mappings":""}'
    const a = makeArtifacts({ probes: { [BASELINE_PROBE]: probe(BASELINE_PROBE, catchAll) }, sourceMaps: [probe(MAP_PATH, catchAll)] })
    expect(exposedSourceMaps.run(a).status).toBe('pass')
  })

  test('passes when the scripts name no map, skipped when the page did not load', () => {
    expect(run([]).status).toBe('pass')
    expect(run([], null).status).toBe('skipped')
  })

  test('skipped when every map request failed', () => {
    expect(run([{ ...probe(MAP_PATH, ''), status: 0, error: 'timeout' }]).status).toBe('skipped')
  })

  test('reports only the served maps among several', () => {
    const r = run([probe(MAP_PATH, map()), probe('/assets/vendor.js.map', SPA_HTML, 200, 'text/html')])
    expect(r.status).toBe('fail')
    expect((r.evidence.maps as Array<{ url: string }>).map((m) => m.url)).toEqual(['https://example.com/assets/index-3f2a.js.map'])
  })
})
