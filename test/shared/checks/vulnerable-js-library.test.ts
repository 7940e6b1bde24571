import { describe, expect, test } from 'bun:test'
import { VULNERABLE_LIBRARIES } from '../../../shared/checks/data/vulnerable-libraries.ts'
import { vulnerableJsLibrary } from '../../../shared/checks/security/vulnerable-js-library.ts'
import { detectLibraries } from '../../../shared/checks/util/library-detectors.ts'
import type { ScriptArtifact } from '../../../shared/checks/types.ts'
import { compareVersions, parseRange, parseVersion, satisfies } from '../../../shared/checks/util/semver.ts'
import repository from '../../../shared/checks/data/retire-repository.json' with { type: 'json' }
import { detectRepositoryLibraries, literalRuns, normaliseVersion, repositoryEntry } from '../../../shared/checks/util/retire.ts'
import { makeArtifacts, noise, script } from './artifacts.ts'
import { countRegexWork } from '../../harness/regex-work.ts'

// Fragments shaped like the real builds (banners and version constants as the libraries ship them).
const JQUERY_MIN = (v: string) =>
  `/*! jQuery v${v} | (c) JS Foundation and other contributors | jquery.org/license */\n` +
  `!function(e,t){"use strict";"object"==typeof module&&"object"==typeof module.exports?module.exports=e.document?t(e,!0):function(e){return t(e)}:t(e)}` +
  `("undefined"!=typeof window?window:this,function(C,e){"use strict";var t=[],E=C.document,r=Object.getPrototypeOf,s=t.slice;` +
  `var f="${v}",k=function(e,t){return new k.fn.init(e,t)},p=/^[\\s\\uFEFF\\xA0]+|[\\s\\uFEFF\\xA0]+$/g;k.fn=k.prototype={jquery:f,constructor:k,length:0}});`
/** jQuery bundled by webpack/terser: no banner, only the version constant before the factory. */
const JQUERY_BUNDLED = (v: string) =>
  `(self.webpackChunk=self.webpackChunk||[]).push([[179],{755:function(e,t){var n,r;!function(t,n){"use strict";` +
  `var i=[],o=Object.getPrototypeOf,a=i.slice;var t="${v}",e=/HTML$/i,ce=function(e,t){return new ce.fn.init(e,t)};ce.fn=ce.prototype={jquery:t,constructor:ce}}}}]);`
const LODASH_MIN = (v: string) =>
  `/**\n * @license\n * Lodash <https://lodash.com/>\n * Copyright OpenJS Foundation and other contributors <https://openjsf.org/>\n * Released under MIT license <https://lodash.com/license>\n` +
  ` * Based on Underscore.js 1.8.3 <http://underscorejs.org/LICENSE>\n */\n` +
  `;(function(){function n(n,t,r){switch(r.length){case 0:return n.call(t)}return n.apply(t,r)}` +
  `var t,r="${v}",e=200,u="Unsupported core-js use. Try https://npms.io/search?q=ponyfill.",i="Expected a function",o="Invalid \`variable\` option passed into \`_.template\`",f="__lodash_hash_undefined__";}).call(this);`
const LODASH_SOURCE = (v: string) =>
  `;(function() {\n  /** Used as a safe reference for \`undefined\` in pre-ES5 environments. */\n  var undefined;\n\n  /** Used as the semantic version number. */\n` +
  `  var VERSION = '${v}';\n\n  /** Used as the size to enable large array optimizations. */\n  var LARGE_ARRAY_SIZE = 200;\n\n  var HASH_UNDEFINED = '__lodash_hash_undefined__';\n}.call(this));`

type Finding = {
  library: string
  id: string
  version: string
  scripts: string[]
  detectedBy: string
  advisories: Array<{ ids: string[]; fixedIn: string | null }>
  fixedVersion: string | null
}

const run = (...scripts: ScriptArtifact[]) => vulnerableJsLibrary.run(makeArtifacts({ scripts }))
const at = (name: string, body: string) => script(`https://example.com/assets/${name}`, body)
const findings = (r: ReturnType<typeof run>) => r.evidence.findings as Finding[]
const detected = (body: string) => detectLibraries(at('x.js', body)).map((d) => `${d.library}@${d.version}`)

describe('semver', () => {
  test('orders releases and pre-releases', () => {
    const v = (s: string) => parseVersion(s)!
    expect(compareVersions(v('3.4.1'), v('3.5.0'))).toBe(-1)
    expect(compareVersions(v('3.5.0-rc.1'), v('3.5.0'))).toBe(-1)
    expect(compareVersions(v('1.13.0-1'), v('1.13.0-2'))).toBe(-1)
    expect(compareVersions(v('1.13.0-2'), v('1.13.0-rc'))).toBe(-1)
    expect(compareVersions(v('4.17.21'), v('4.17.3'))).toBe(1)
    expect(compareVersions(v('v2.0'), v('2.0.0'))).toBe(0)
    expect(parseVersion('not-a-version')).toBeNull()
  })

  test('matches ranges with || and comparator sets', () => {
    expect(satisfies('3.4.1', '>=1.2.0 <3.5.0')).toBe(true)
    expect(satisfies('3.5.0', '>=1.2.0 <3.5.0')).toBe(false)
    expect(satisfies('4.2.1', '<3.4.1 || >=4.0.0 <4.3.1')).toBe(true)
    expect(satisfies('3.4.1', '<3.4.1 || >=4.0.0 <4.3.1')).toBe(false)
    expect(satisfies('1.13.0-1', '>=1.3.2 <1.12.1 || >=1.13.0-0 <1.13.0-2')).toBe(true)
    expect(satisfies('1.13.0', '>=1.3.2 <1.12.1 || >=1.13.0-0 <1.13.0-2')).toBe(false)
    expect(satisfies('garbage', '<9.0.0')).toBe(false)
    expect(() => parseRange('<=> 1.0')).toThrow()
  })

  test('every range and fixed version in the advisory table parses, and no fix lies inside its own range', () => {
    for (const lib of VULNERABLE_LIBRARIES) {
      for (const a of lib.advisories) {
        expect(() => parseRange(a.range)).not.toThrow()
        expect(a.ids.length).toBeGreaterThan(0)
        for (const id of a.ids) expect(id).toMatch(/^(?:CVE-\d{4}-\d{4,}|GHSA(?:-[23456789cfghjmpqrvwx]{4}){3})$/)
        for (const f of a.fixed) {
          expect(parseVersion(f)).not.toBeNull()
          expect(`${lib.id} ${a.ids[0]} fixed ${f}: ${satisfies(f, a.range)}`).toBe(`${lib.id} ${a.ids[0]} fixed ${f}: false`)
        }
      }
      for (const e of lib.endOfLife) expect(() => parseRange(e.range)).not.toThrow()
    }
  })
})

describe('vulnerable-js-library', () => {
  test('fails jQuery 3.4.1 read from its banner, with advisories, script URL and the fixed version', () => {
    const r = run(at('vendor.js', JQUERY_MIN('3.4.1')))
    expect(r.status).toBe('fail')
    const [f] = findings(r)
    expect(f).toMatchObject({
      library: 'jQuery',
      version: '3.4.1',
      scripts: ['https://example.com/assets/vendor.js'],
      detectedBy: 'banner',
      fixedVersion: '3.5.0',
    })
    const ids = f!.advisories.flatMap((a) => a.ids)
    expect(ids).toContain('CVE-2020-11022')
    expect(ids).toContain('CVE-2020-11023')
    expect(ids).not.toContain('CVE-2019-11358') // fixed in 3.4.0
    expect(r.summary).toContain('jQuery 3.4.1')
    expect(r.summary).toContain('https://example.com/assets/vendor.js')
  })

  test('reads the version from the file, never the file name: jquery-3.4.1.min.js holding 3.7.1 passes', () => {
    const r = run(script('https://example.com/js/jquery-3.4.1.min.js', JQUERY_MIN('3.7.1')))
    expect(r.status).toBe('pass')
    expect(r.evidence.detected).toEqual([
      { library: 'jQuery', version: '3.7.1', scripts: ['https://example.com/js/jquery-3.4.1.min.js'], detectedBy: 'banner' },
    ])
  })

  test('a file named after a vulnerable version but without a readable version warns, and says its name is all there is', () => {
    const r = run(script('https://example.com/js/jquery-1.8.3.min.js', 'var a=window.jQuery;a&&a(function(){a("#x").hide()});'))
    expect(r.status).toBe('warn')
    expect(r.evidence.detected).toMatchObject([{ library: 'jQuery', version: '1.8.3', detectedBy: 'filename' }])
    expect(r.summary).toContain('by its file name only')
    // Its content, when it names a version, decides.
    expect(run(script('https://example.com/js/jquery-1.8.3.min.js', JQUERY_MIN('3.7.1'))).status).toBe('pass')
  })

  test('detects jQuery bundled and minified without a banner, from its version constant', () => {
    const r = run(at('chunk-179.js', JQUERY_BUNDLED('3.4.1')))
    expect(r.status).toBe('fail')
    expect(findings(r)[0]).toMatchObject({ version: '3.4.1', detectedBy: 'content' })
    expect(run(at('chunk-179.js', JQUERY_BUNDLED('3.7.1'))).status).toBe('pass')
  })

  test('a minified bundle that mentions jQuery without a version is not a finding', () => {
    const body =
      'if("undefined"==typeof jQuery)throw new Error("Bootstrap\'s JavaScript requires jQuery");' +
      '+function(t){var e=t.fn.jquery.split(" ")[0].split(".");if(e[0]<2&&e[1]<9)throw new Error("Bootstrap\'s JavaScript requires jQuery version 1.9.1 or higher")}(jQuery);' +
      'var pkg={name:"app",dependencies:{jquery:"^3.4.1",lodash:"4.17.15",moment:"2.29.1"}};import("jquery").then(function(m){m.default("#a")});' +
      '/* Requires jQuery v1.7.2 or later */var VERSION="1.0.0";'
    const r = run(at('app.js', body))
    expect(r.status).toBe('pass')
    expect(r.evidence.detected).toEqual([])
  })

  test('passes a library version that is fixed', () => {
    expect(run(at('lodash.min.js', LODASH_MIN('4.18.1'))).status).toBe('pass')
    expect(run(at('purify.min.js', 'function x(){}a.version="3.4.13",a.removed=[],a.isSupported=!0;')).status).toBe('pass')
  })

  test('fails old lodash from the minified build and from the source build', () => {
    const min = run(at('lodash.min.js', LODASH_MIN('4.17.15')))
    expect(min.status).toBe('fail')
    expect(findings(min)[0]).toMatchObject({ library: 'Lodash', version: '4.17.15', fixedVersion: '4.18.0' })
    expect(findings(min)[0]!.advisories.flatMap((a) => a.ids)).toContain('CVE-2021-23337')
    expect(detected(LODASH_SOURCE('4.17.11'))).toEqual(['lodash@4.17.11'])
    const old = findings(run(at('lodash.js', LODASH_SOURCE('4.17.11'))))[0]!.advisories.flatMap((a) => a.ids)
    expect(old).toContain('CVE-2019-10744') // prototype pollution, < 4.17.12
  })

  test('a bare VERSION constant away from lodash markers is not lodash', () => {
    expect(detected(`var VERSION = '4.17.15';${' '.repeat(10_000)}function f(){}`)).toEqual([])
  })

  test("Lodash's banner crediting Underscore.js 1.8.3 is not Underscore", () => {
    expect(detected(LODASH_MIN('4.18.1'))).toEqual(['lodash@4.18.1'])
  })

  test('detects Underscore from its own banner and content', () => {
    expect(
      detected('//     Underscore.js 1.9.1\n//     http://underscorejs.org\n//     (c) 2009-2018 Jeremy Ashkenas\n!function(){}()'),
    ).toEqual(['underscore@1.9.1'])
    expect(detected('var n="1.12.0",r="object"==typeof self&&self.self===self&&self||"object"==typeof global&&global')).toEqual([
      'underscore@1.12.0',
    ])
    expect(run(at('u.js', '//     Underscore.js 1.9.1\n//     http://underscorejs.org\n')).status).toBe('fail')
  })

  test('AngularJS: fails before 1.8.0, warns on 1.8.x where no release fixes the open advisories', () => {
    const old = run(
      at(
        'angular.min.js',
        '/*\n AngularJS v1.7.9\n (c) 2010-2020 Google LLC. http://angularjs.org\n License: MIT\n*/ /**\n * @license AngularJS v1.7.9\n */(function(){})',
      ),
    )
    expect(old.status).toBe('fail')
    expect(findings(old)[0]!.advisories.flatMap((a) => a.ids)).toContain('CVE-2020-7676')
    const latest = run(at('angular.js', 'var version={full:"1.8.3",major:1,minor:8,dot:3,codeName:"ultimate-farewell"};'))
    expect(latest.status).toBe('warn')
    expect(findings(latest)[0]).toMatchObject({ library: 'AngularJS', version: '1.8.3', fixedVersion: null })
  })

  test('Bootstrap: 3.3.7 fails (CVE-2019-8331, fixed in 3.4.1), 4.6.2 warns (end of life, unfixed), 5.3.3 passes', () => {
    const b3 = run(
      at(
        'bootstrap.min.js',
        '/*!\n * Bootstrap v3.3.7 (http://getbootstrap.com)\n * Copyright 2011-2016 Twitter, Inc.\n */\nif("undefined"==typeof jQuery)throw new Error("x");',
      ),
    )
    expect(b3.status).toBe('fail')
    expect(findings(b3)[0]).toMatchObject({ version: '3.3.7', fixedVersion: '3.4.1' })
    const b4 = run(at('main.js', 'var g="alert",p="4.6.2",m="bs.alert",v="."+m,E=t.fn[g];'))
    expect(b4.status).toBe('warn')
    expect(findings(b4)[0]!.advisories.flatMap((a) => a.ids)).toContain('CVE-2024-6531')
    expect(
      run(at('b5.js', '/*!\n  * Bootstrap v5.3.3 (https://getbootstrap.com/)\n  * Copyright 2011-2024 The Bootstrap Authors\n  */')).status,
    ).toBe('pass')
  })

  test('plugins named after a library are not the library', () => {
    expect(detected('/*!\n * jQuery UI Touch Punch 0.2.3\n *\n * Copyright 2011–2014, Dave Furfero\n */')).toEqual([])
    expect(detected('/*!\n * Bootstrap-select v1.13.14 (https://developer.snapappointments.com/bootstrap-select)\n */')).toEqual([])
    expect(detected('/*!\n * Datepicker for Bootstrap v1.9.0 (https://github.com/uxsolutions/bootstrap-datepicker)\n */')).toEqual([])
  })

  test('jQuery UI, Moment, Handlebars, DOMPurify from their banners and constants', () => {
    expect(detected('/*! jQuery UI - v1.12.1 - 2016-09-14\n* http://jqueryui.com\n* Includes: widget.js */')).toEqual(['jquery-ui@1.12.1'])
    expect(detected('//! moment.js\n//! version : 2.29.1\n//! authors : Tim Wood')).toEqual(['moment@2.29.1'])
    expect(detected('m._isAMomentObject=!0;f.version="2.29.1",e=k,f.fn=lt,f.min=function(){}')).toEqual(['moment@2.29.1'])
    expect(detected('Handlebars.VERSION = "4.0.11";')).toEqual(['handlebars@4.0.11'])
    expect(detected('t.VERSION="4.7.7";var o=8;t.COMPILER_REVISION=o;')).toEqual(['handlebars@4.7.7'])
    expect(detected("DOMPurify.version = '2.0.7';")).toEqual(['dompurify@2.0.7'])
    expect(detected('/*! @license DOMPurify 2.4.9 | (c) Cure53 and other contributors */')).toEqual(['dompurify@2.4.9'])
    for (const body of [
      '/*! jQuery UI - v1.12.1 - 2016-09-14\n* http://jqueryui.com\n*/',
      '//! moment.js\n//! version : 2.29.1',
      'Handlebars.VERSION = "4.0.11";',
      "DOMPurify.version = '2.0.7';",
    ]) {
      expect(run(at('lib.js', body)).status).toBe('fail')
    }
  })

  test('Vue 2 is reported as end of life (info), not as a failure', () => {
    const r = run(at('vue.min.js', '/*!\n * Vue.js v2.6.10\n * (c) 2014-2019 Evan You\n * Released under the MIT License.\n */'))
    expect(r.status).toBe('info')
    expect(r.summary).toContain('end of life')
  })

  test('reports one finding per library version, listing every script that carries it', () => {
    const r = run(
      at('a.js', JQUERY_MIN('3.4.1')),
      at('b.js', JQUERY_BUNDLED('3.4.1')),
      script('https://example.com/#inline-1', JQUERY_MIN('3.4.1'), true),
    )
    expect(findings(r)).toHaveLength(1)
    expect(findings(r)[0]!.scripts).toEqual([
      'https://example.com/assets/a.js',
      'https://example.com/assets/b.js',
      'https://example.com/#inline-1',
    ])
  })

  test('ranks the failing library first and mentions the others', () => {
    const r = run(
      at('vue.js', '/*!\n * Vue.js v2.6.10\n */'),
      at('b.js', 'var g="alert",p="4.6.2",m="bs.alert"'),
      at('l.js', LODASH_MIN('4.17.15')),
    )
    expect(r.status).toBe('fail')
    expect(findings(r).map((f) => f.id)).toEqual(['lodash', 'bootstrap', 'vue'])
  })

  test('passes with no scripts', () => {
    expect(run().status).toBe('pass')
  })

  test('reads 50 scripts of 200 KB of minified code a bounded number of times', () => {
    const chunk = (i: number) =>
      `function f${i}(e,t){var n=e.version||"${i % 9}.${i % 7}.${i % 5}",r={codeName:"x",full:n};t.fn.init&&t.fn.init(e);` +
      `return r.VERSION="1.${i}.0",e.removed=[],"bs.modal"===t&&(n=_isAMomentObject),"FunctionalRenderContext"in e,n.ui&&n.ui.version,` +
      `e.src="data:image/png;base64,${noise(200, i, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/')}",` +
      `"Expected a function"+"COMPILER_REVISION"+"self.self"+"TRANSITION_DURATION"+"jquery"+"_.VERSION"}`
    const parts: string[] = []
    let size = 0
    for (let i = 0; size < 200_000; i++) {
      const c = chunk(i)
      parts.push(c)
      size += c.length
    }
    const body = parts.join('')
    const identifierRun = 'a'.repeat(200_000)
    const scripts = Array.from({ length: 50 }, (_, i) => at(`chunk-${i}.js`, i === 49 ? identifierRun : body))
    scripts[25] = at('chunk-25.js', body + JQUERY_MIN('3.4.1'))
    const { value: r, scanned } = countRegexWork(() => run(...scripts))
    expect(r.status).toBe('fail')
    expect(findings(r).map((f) => `${f.id}@${f.version}`)).toEqual(['jquery@3.4.1'])
    const input = scripts.reduce((n, s) => n + s.body.length, 0)
    // Each detector reads a script a bounded number of times (16 in all): never once per match or line.
    expect(scanned).toBeLessThanOrEqual(24 * input)
  })

  test('stays linear on adversarial input: long gaps after version literals, many VERSION constants', () => {
    const gates = '.fn.init( Expected a function self.self "bs. .removed COMPILER_REVISION __lodash_hash_undefined__ '
    const bodies = [
      `${gates}"1.2.3",${' '.repeat(2_000_000)}`,
      gates + '"1.2.3",'.repeat(250_000),
      gates + 'VERSION="1.2.3";'.repeat(120_000),
      `${gates}"1.2.3",${'/* a */\n'.repeat(200_000)}`,
    ]
    for (const body of bodies) {
      const { scanned } = countRegexWork(() => run(at('x.js', body)))
      expect(scanned).toBeLessThanOrEqual(12 * body.length)
    }
  })
})

describe('libraries from the RetireJS repository', () => {
  test('its extractors run on content: Knockout and Chart.js banners, with advisories and the fix', () => {
    const knockout = at(
      'knockout.js',
      '/*!\n * Knockout JavaScript library v3.4.2\n * (c) The Knockout.js team - http://knockoutjs.com/\n */\n(function(){var ko={};})();',
    )
    const chart = at(
      'Chart.min.js',
      '/*!\n * Chart.js v2.9.3\n * https://www.chartjs.org\n * (c) 2019 Chart.js Contributors\n */\n!function(t){}();',
    )
    const r = run(knockout, chart)
    expect(r.status).toBe('fail')
    const byLib = new Map(findings(r).map((f) => [f.library, f]))
    expect(byLib.get('knockout')?.version).toBe('3.4.2')
    expect(byLib.get('knockout')?.advisories.flatMap((a) => a.ids)).toContain('CVE-2019-14862')
    expect(byLib.get('chart.js')?.fixedVersion).toBe('2.9.4')
    expect(JSON.stringify(r.evidence.advisoryData)).toContain('RetireJS repository')
  })

  test('current releases are detected and pass; file names without content say nothing', () => {
    const r = run(at('knockout-3.4.2.min.js', '/*!\n * Knockout JavaScript library v3.5.1\n */\n'), at('chart-2.9.3.js', 'console.log(1)'))
    expect(r.status).toBe('pass')
    expect(JSON.stringify(r.evidence.detected)).toContain('3.5.1')
  })

  test('a discontinued library is reported as end of life even without an advisory for its version', () => {
    const yui = at(
      'yui-min.js',
      '/*\nYUI 3.18.1 (build f7e7bcb)\nCopyright 2014 Yahoo! Inc. All rights reserved.\n*/\nYUI.add("yui-base",function(){});',
    )
    const r = run(yui)
    expect(['info', 'warn', 'fail']).toContain(r.status)
    expect(JSON.stringify(r.evidence.findings)).toContain('discontinued')
  })

  test('every extractor has a literal gate of at least 4 characters, and versions normalise', () => {
    const weak: string[] = []
    for (const [name, lib] of Object.entries(repository.libraries)) {
      for (const p of lib.filecontent) {
        const gate = literalRuns(p.replaceAll('§§version§§', '()')).sort((a, b) => b.length - a.length)[0] ?? ''
        if (gate.length < 4) weak.push(`${name}: ${p}`)
      }
    }
    expect(weak).toEqual([])
    expect(normaliseVersion('1.2.3')).toBe('1.2.3')
    expect(normaliseVersion('3.0.0-rc.1')).toBe('3.0.0-rc.1')
    expect(normaliseVersion('1.0.0rc1')).toBe('1.0.0-rc1')
    expect(normaliseVersion('2.1.4.')).toBe('2.1.4')
    expect(normaliseVersion('x')).toBeNull()
    for (const name of Object.keys(repository.libraries)) {
      for (const a of repositoryEntry(name)!.advisories) expect(() => parseRange(a.range)).not.toThrow()
    }
  })

  test('reads a large bundle once per gate, however many it holds', () => {
    const gates = Object.values(repository.libraries)
      .flatMap((l) => l.filecontent)
      .map((p) => literalRuns(p.replaceAll('§§version§§', '()')).sort((a, b) => b.length - a.length)[0])
      .join(' ')
    const body = `${gates} ${'var a=1;'.repeat(250_000)} ${gates}`
    const { scanned } = countRegexWork(() => detectRepositoryLibraries(at('big.js', body)))
    // Once per gate of the repository (139 here), however many of them match.
    expect(scanned).toBeLessThanOrEqual(200 * body.length)
  })
})

describe('vulnerable-js-library advice', () => {
  const scripts = [
    script('https://cdn.jsdelivr.net/npm/handlebars@4.0.11/dist/handlebars.min.js', 'Handlebars.VERSION = "4.0.11";'),
    script('https://shop.test/assets/index-3f2a.js', "DOMPurify.version = '2.0.7';//! moment.js\n//! version : 2.29.1\n"),
  ]
  const result = vulnerableJsLibrary.run(makeArtifacts({ scripts }))

  test('names the libraries found, never another, each changed where its copy comes from', () => {
    expect(result.status).toBe('fail')
    const advice = vulnerableJsLibrary.advise!(result, 'generic')!
    expect(advice).not.toContain('jquery')
    expect(advice).toContain('Handlebars 4.0.11 is loaded from https://cdn.jsdelivr.net/npm/handlebars@4.0.11/dist/handlebars.min.js')
    expect(advice).toMatch(/change the version in that <script src> .* to 4\.\d+\.\d+/)
    expect(advice).toMatch(/DOMPurify 2\.0\.7 .*npm install dompurify@\^\d/)
    expect(advice).toMatch(/Moment 2\.29\.1 .*npm install moment@\^2\.29\.\d/)
  })

  test('the fix brief points at package.json and the HTML, not the app code', async () => {
    const { brief } = await import('../../../api/findings/fix-brief.ts')
    const check = {
      ...result,
      id: 'vulnerable-js-library',
      title: 't',
      category: 'security' as const,
      severity: 'high' as const,
      advice: null,
    }
    const item = brief(check, 'express', { checks: [check], finalUrl: 'https://shop.test/' } as never, 'https://shop.test/')
    expect(item.where).toContain('package.json')
    expect(item.where).toContain('index.html')
    expect(item.change).toContain('npm install dompurify@')
    expect(item.verify).toContain('cdn.jsdelivr.net/npm/handlebars@4.0.11')
  })

  test('hostile evidence gives no advice rather than a crash', () => {
    for (const evidence of [{}, { findings: 'x' }, { findings: [null, 3, { library: 1 }] }]) {
      expect(vulnerableJsLibrary.advise!({ status: 'fail', evidence }, 'generic')).toBeNull()
    }
  })
})

describe('AngularJS by the banner its vendor ships', () => {
  // The first lines of angular.min.js as published on npm (1.2.32, 1.5.8, 1.8.2) and of angular.js 1.8.2.
  const banners: Array<[string, string]> = [
    [
      '1.2.32',
      "/*\n AngularJS v1.2.32\n (c) 2010-2014 Google, Inc. http://angularjs.org\n License: MIT\n*/\n(function(V,W,v){'use strict';",
    ],
    ['1.5.8', "/*\n AngularJS v1.5.8\n (c) 2010-2016 Google, Inc. http://angularjs.org\n License: MIT\n*/\n(function(C){'use strict';"],
    ['1.8.2', "/*\n AngularJS v1.8.2\n (c) 2010-2020 Google LLC. http://angularjs.org\n License: MIT\n*/\n(function(z){'use strict';"],
    [
      '1.8.2',
      "/**\n * @license AngularJS v1.8.2\n * (c) 2010-2020 Google LLC. http://angularjs.org\n * License: MIT\n */\n(function(window) {'use strict';",
    ],
  ]

  test('a banner alone names AngularJS and its version, and AngularJS 1.x is never a pass', () => {
    for (const [version, banner] of banners) {
      const found = detectLibraries(script('https://shop.test/js/angular.min.js', banner)).map((d) => `${d.library}@${d.version}`)
      expect(found).toEqual([`angularjs@${version}`])
      const r = vulnerableJsLibrary.run(makeArtifacts({ scripts: [script('https://shop.test/js/angular.min.js', banner)] }))
      expect({ version, status: r.status }).toEqual({ version, status: version === '1.8.2' ? 'warn' : 'fail' })
      expect(r.summary).toContain('AngularJS')
    }
  })

  test('prose naming AngularJS is not a banner', () => {
    expect(detectLibraries(script('https://shop.test/a.js', '// ported from AngularJS v1.8.2 docs\nvar a=1'))).toEqual([])
  })
})
