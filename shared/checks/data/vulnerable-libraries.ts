// A data table (one entry a library, its advisories and end-of-life dates): it reads better whole than split.
// Published advisories for the front-end libraries the vulnerable-js-library check recognises. Ranges,
// patched versions and severities are the GitHub Advisory Database's (its "moderate" is our "medium");
// ranges use the grammar of ../util/semver.ts, so "<=4.6.2" stands for "last affected 4.6.2". Only
// advisories about the library itself are listed: a CLI-only or server-only flaw cannot be reached
// through a copy served to the browser, and a banner cannot tell a sibling package (angular-sanitize)
// apart from the core.

import type { Severity } from '../types.ts'

/** When the table was last compared with its sources; shown in the check's description and evidence. */
export const ADVISORY_DATA = 'in November 2026 (GitHub Advisory Database)'

export interface Advisory {
  /** CVE first when there is one, then the GHSA id. */
  ids: string[]
  severity: Severity
  summary: string
  /** Affected versions. */
  range: string
  /** First fixed release of each affected line; empty when no release of the library fixes it. */
  fixed: string[]
}

export interface LibraryEntry {
  /** The detector's id. */
  id: string
  name: string
  /** What to move to, as a short phrase. */
  upgrade: string
  advisories: Advisory[]
  endOfLife: Array<{ range: string; note: string }>
}

export const VULNERABLE_LIBRARIES: LibraryEntry[] = [
  {
    id: 'jquery',
    name: 'jQuery',
    upgrade: 'jQuery 3.7.1 or later',
    advisories: [
      {
        ids: ['CVE-2011-4969', 'GHSA-579v-mp3v-rrw5'],
        severity: 'medium',
        summary: 'XSS when location.hash is used to select elements',
        range: '<1.6.3',
        fixed: ['1.6.3'],
      },
      {
        ids: ['CVE-2012-6708', 'GHSA-2pqj-h3vj-pqgw'],
        severity: 'medium',
        summary: 'jQuery(string) may treat a selector containing "<" as HTML (XSS)',
        range: '<1.9.0',
        fixed: ['1.9.0'],
      },
      {
        ids: ['CVE-2020-7656', 'GHSA-q4m3-2j7h-f7xw'],
        severity: 'medium',
        summary: '.load() runs <script> tags written with whitespace, such as </script >',
        range: '<1.9.0',
        fixed: ['1.9.0'],
      },
      {
        // 1.12.2 shipped the fix and 1.12.3 reverted it, hence the two lines.
        ids: ['CVE-2015-9251', 'GHSA-rmxg-73gg-4p98'],
        severity: 'medium',
        summary: 'Cross-origin Ajax responses of type text/javascript are executed without dataType',
        range: '<1.12.2 || >=1.12.3 <3.0.0',
        fixed: ['1.12.2', '3.0.0'],
      },
      {
        ids: ['CVE-2019-11358', 'GHSA-6c3j-c64m-qhgq'],
        severity: 'medium',
        summary: 'Prototype pollution through jQuery.extend(true, {}, ...)',
        range: '<3.4.0',
        fixed: ['3.4.0'],
      },
      {
        ids: ['CVE-2020-11022', 'GHSA-gxr4-xjj5-5px2'],
        severity: 'medium',
        summary: 'HTML passed to .html(), .append() and others may run script even after sanitizing (htmlPrefilter)',
        range: '>=1.2.0 <3.5.0',
        fixed: ['3.5.0'],
      },
      {
        ids: ['CVE-2020-11023', 'GHSA-jpcq-cgw6-v4j6'],
        severity: 'medium',
        summary: 'HTML containing <option> elements passed to DOM manipulation methods may run script',
        range: '>=1.0.3 <3.5.0',
        fixed: ['3.5.0'],
      },
    ],
    endOfLife: [{ range: '<3.0.0-0', note: 'jQuery 1.x and 2.x are no longer maintained: only the 3.x and 4.x lines get fixes.' }],
  },
  {
    id: 'jquery-ui',
    name: 'jQuery UI',
    upgrade: 'jQuery UI 1.13.2 or later',
    advisories: [
      {
        ids: ['CVE-2016-7103', 'GHSA-hpcf-8vf9-q4gj'],
        severity: 'medium',
        summary: 'XSS through the closeText option of the Dialog widget',
        range: '<1.12.0',
        fixed: ['1.12.0'],
      },
      {
        ids: ['CVE-2021-41182', 'GHSA-9gj3-hwp5-pmwc'],
        severity: 'medium',
        summary: 'XSS through the altField option of the Datepicker widget',
        range: '<1.13.0',
        fixed: ['1.13.0'],
      },
      {
        ids: ['CVE-2021-41183', 'GHSA-j7qv-pgf6-hvh4'],
        severity: 'medium',
        summary: 'XSS through the *Text options of the Datepicker widget',
        range: '<1.13.0',
        fixed: ['1.13.0'],
      },
      {
        ids: ['CVE-2021-41184', 'GHSA-gpqq-952q-5327'],
        severity: 'medium',
        summary: 'XSS through the "of" option of the .position() util',
        range: '<1.13.0',
        fixed: ['1.13.0'],
      },
      {
        ids: ['CVE-2022-31160', 'GHSA-h6gj-6jjq-h8g9'],
        severity: 'medium',
        summary: 'XSS when refreshing a checkboxradio whose initial label text looks like HTML',
        range: '<1.13.2',
        fixed: ['1.13.2'],
      },
    ],
    endOfLife: [],
  },
  {
    id: 'lodash',
    name: 'Lodash',
    // 4.18.0 carries the fixes but was deprecated on npm as a bad release.
    upgrade: 'Lodash 4.18.1 or later',
    advisories: [
      {
        ids: ['CVE-2018-3721', 'GHSA-fvqr-27wr-82fm'],
        severity: 'low',
        summary: 'Prototype pollution through defaultsDeep, merge and mergeWith',
        range: '<4.17.5',
        fixed: ['4.17.5'],
      },
      {
        ids: ['CVE-2018-16487', 'GHSA-4xc9-xhrj-v574'],
        severity: 'high',
        summary: 'Prototype pollution through merge, mergeWith and defaultsDeep',
        range: '<4.17.11',
        fixed: ['4.17.11'],
      },
      {
        ids: ['CVE-2019-1010266', 'GHSA-x5rq-j2xg-h7qm'],
        severity: 'medium',
        summary: 'Regular expression denial of service in string functions',
        range: '<4.17.11',
        fixed: ['4.17.11'],
      },
      {
        ids: ['CVE-2019-10744', 'GHSA-jf85-cpcp-j695'],
        severity: 'critical',
        summary: 'Prototype pollution through defaultsDeep with a constructor payload',
        range: '<4.17.12',
        fixed: ['4.17.12'],
      },
      {
        ids: ['CVE-2020-8203', 'GHSA-p6mc-m468-83gw'],
        severity: 'high',
        summary: 'Prototype pollution through zipObjectDeep',
        range: '>=3.7.0 <4.17.19',
        fixed: ['4.17.19'],
      },
      {
        ids: ['CVE-2021-23337', 'GHSA-35jh-r3h4-6jhm'],
        severity: 'high',
        summary: 'Command injection through the template function',
        range: '<4.17.21',
        fixed: ['4.17.21'],
      },
      {
        ids: ['CVE-2020-28500', 'GHSA-29mw-wpgm-hmr9'],
        severity: 'medium',
        summary: 'Regular expression denial of service in toNumber, trim and trimEnd',
        range: '>=4.0.0 <4.17.21',
        fixed: ['4.17.21'],
      },
      {
        ids: ['CVE-2025-13465', 'GHSA-xxjr-mmjv-4gpg'],
        severity: 'medium',
        summary: 'Prototype pollution in _.unset and _.omit: crafted paths delete methods from global prototypes',
        range: '>=4.0.0 <=4.17.22',
        fixed: ['4.17.23'],
      },
      {
        ids: ['CVE-2026-4800', 'GHSA-r5fr-rjxr-66jc'],
        severity: 'high',
        summary: 'Code injection through _.template imports key names',
        range: '>=4.0.0 <=4.17.23',
        fixed: ['4.18.0'],
      },
      {
        ids: ['CVE-2026-2950', 'GHSA-f23m-r3pf-42rh'],
        severity: 'medium',
        summary: 'Prototype pollution in _.unset and _.omit through array paths (incomplete fix of CVE-2025-13465)',
        range: '<=4.17.23',
        fixed: ['4.18.0'],
      },
    ],
    endOfLife: [],
  },
  {
    id: 'underscore',
    name: 'Underscore',
    upgrade: 'Underscore 1.13.8 or later',
    advisories: [
      {
        ids: ['CVE-2021-23358', 'GHSA-cf4h-3jhx-xvhq'],
        severity: 'critical',
        summary: 'Arbitrary code execution through the template function',
        range: '>=1.3.2 <1.12.1 || >=1.13.0-0 <1.13.0-2',
        fixed: ['1.12.1', '1.13.0-2'],
      },
      {
        ids: ['CVE-2026-27601'],
        severity: 'high',
        summary: 'Denial of service: unbounded recursion in _.flatten and _.isEqual on deeply nested data',
        range: '<1.13.8',
        fixed: ['1.13.8'],
      },
    ],
    endOfLife: [],
  },
  {
    id: 'angularjs',
    name: 'AngularJS',
    upgrade: 'Angular (AngularJS is end of life)',
    advisories: [
      {
        ids: ['CVE-2019-14863', 'GHSA-r5fx-8r73-v86c'],
        severity: 'medium',
        summary: 'XSS through unsanitized xlink:href attributes',
        range: '<1.5.0-beta.1',
        fixed: ['1.5.0-beta.1'],
      },
      {
        ids: ['GHSA-28hp-fgcr-2r4h'],
        severity: 'medium',
        summary: 'XSS through JSONP',
        range: '<1.6.0',
        fixed: ['1.6.0'],
      },
      {
        ids: ['CVE-2019-10768', 'GHSA-89mq-4x47-5v83'],
        severity: 'high',
        summary: 'Prototype pollution through angular.merge()',
        range: '<1.7.9',
        fixed: ['1.7.9'],
      },
      {
        ids: ['CVE-2020-7676', 'GHSA-mhp6-pxh8-r675'],
        severity: 'medium',
        summary: 'Sanitized HTML wrapping <option> in <select> turns back into script in JQLite',
        range: '<1.8.0',
        fixed: ['1.8.0'],
      },
      {
        ids: ['GHSA-5cp4-xmrw-59wf'],
        severity: 'medium',
        summary: 'XSS through JQLite DOM manipulation functions on sanitized HTML',
        range: '<1.8.0',
        fixed: ['1.8.0'],
      },
      {
        ids: ['CVE-2022-25844', 'GHSA-m2h2-264f-f486'],
        severity: 'medium',
        summary: 'Regular expression denial of service through a custom locale posPre rule',
        range: '>=1.7.0',
        fixed: [],
      },
      {
        ids: ['CVE-2022-25869', 'GHSA-prc3-vjfx-vhm9'],
        severity: 'medium',
        summary: 'XSS through <textarea> interpolation with page caching in Internet Explorer',
        range: '<=1.8.3',
        fixed: [],
      },
      {
        ids: ['CVE-2023-26116', 'GHSA-2vrf-hf26-jrp5'],
        severity: 'medium',
        summary: 'Regular expression denial of service in angular.copy()',
        range: '<=1.8.3',
        fixed: [],
      },
      {
        ids: ['CVE-2023-26117', 'GHSA-2qqx-w9hr-q5gx'],
        severity: 'medium',
        summary: 'Regular expression denial of service in the $resource service',
        range: '<=1.8.3',
        fixed: [],
      },
      {
        ids: ['CVE-2023-26118', 'GHSA-qwqh-hm9m-p5hr'],
        severity: 'medium',
        summary: 'Regular expression denial of service in <input type="url"> validation',
        range: '<=1.8.3',
        fixed: [],
      },
      {
        ids: ['CVE-2024-21490', 'GHSA-4w4v-5hc9-xrr2'],
        severity: 'high',
        summary: 'Denial of service: catastrophic backtracking when splitting ng-srcset values',
        range: '>=1.3.0 <=1.8.3',
        fixed: [],
      },
      {
        ids: ['CVE-2024-8372', 'GHSA-m9gf-397r-hwpg'],
        severity: 'low',
        summary: 'Improper sanitization of [srcset] bypasses image source restrictions',
        range: '>=1.3.0-rc.4 <=1.8.3',
        fixed: [],
      },
      {
        ids: ['CVE-2024-8373', 'GHSA-mqm9-c95h-x2p6'],
        severity: 'low',
        summary: 'Improper sanitization of [srcset] on <source> bypasses image source restrictions',
        range: '<=1.8.3',
        fixed: [],
      },
    ],
    endOfLife: [{ range: '<2.0.0', note: 'AngularJS support ended on 31 December 2021; no release fixes newer advisories.' }],
  },
  {
    id: 'bootstrap',
    name: 'Bootstrap',
    upgrade: 'Bootstrap 5.3 or later (3.x and 4.x are end of life)',
    advisories: [
      {
        ids: ['CVE-2016-10735', 'GHSA-4p24-vmcr-4gqj'],
        severity: 'medium',
        summary: 'XSS through the data-target attribute',
        range: '>=2.0.4 <3.4.0 || >=4.0.0-beta <4.0.0-beta.2',
        fixed: ['3.4.0', '4.0.0-beta.2'],
      },
      {
        ids: ['CVE-2018-14040', 'GHSA-3wqf-4x89-9g79'],
        severity: 'medium',
        summary: 'XSS through the collapse data-parent attribute',
        range: '>=2.3.0 <3.4.0 || >=4.0.0 <4.1.2',
        fixed: ['3.4.0', '4.1.2'],
      },
      {
        ids: ['CVE-2018-14041', 'GHSA-pj7m-g53m-7638'],
        severity: 'medium',
        summary: 'XSS through the scrollspy data-target property',
        range: '>=4.0.0-alpha.6 <4.1.2',
        fixed: ['4.1.2'],
      },
      {
        ids: ['CVE-2018-14042', 'GHSA-7mvr-5x2g-wfc8'],
        severity: 'medium',
        summary: 'XSS through the tooltip data-container property',
        range: '>=2.3.0 <3.4.0 || >=4.0.0 <4.1.2',
        fixed: ['3.4.0', '4.1.2'],
      },
      {
        ids: ['CVE-2018-20676', 'GHSA-3mgp-fx93-9xv5'],
        severity: 'medium',
        summary: 'XSS through the tooltip data-viewport attribute',
        range: '<3.4.0',
        fixed: ['3.4.0'],
      },
      {
        ids: ['CVE-2018-20677', 'GHSA-ph58-4vrj-w6hr'],
        severity: 'medium',
        summary: 'XSS through the affix configuration target property',
        range: '<3.4.0',
        fixed: ['3.4.0'],
      },
      {
        ids: ['CVE-2019-8331', 'GHSA-9v3m-8fp8-mj99'],
        severity: 'medium',
        summary: 'XSS through the data-template attribute of tooltip and popover',
        range: '>=3.0.0 <3.4.1 || >=4.0.0 <4.3.1',
        fixed: ['3.4.1', '4.3.1'],
      },
      {
        ids: ['CVE-2024-6484', 'GHSA-9mvj-f7w8-pvh2'],
        severity: 'medium',
        summary: 'XSS through the carousel data-slide and data-slide-to attributes via href',
        range: '>=2.0.0 <=3.4.1',
        fixed: [],
      },
      {
        ids: ['CVE-2024-6485', 'GHSA-vxmc-5x29-h64v'],
        severity: 'medium',
        summary: 'XSS through the button data-loading-text attribute',
        range: '>=1.4.0 <=3.4.1',
        fixed: [],
      },
      {
        ids: ['CVE-2024-6531', 'GHSA-vc8w-jr9v-vj7f'],
        severity: 'medium',
        summary: 'XSS through the carousel data-slide and data-slide-to attributes via href',
        range: '>=4.0.0 <=4.6.2',
        fixed: [],
      },
    ],
    endOfLife: [
      { range: '<4.0.0-0', note: 'Bootstrap 3 reached end of life on 24 July 2019.' },
      { range: '>=4.0.0-0 <5.0.0-0', note: 'Bootstrap 4 reached end of life on 1 January 2023.' },
    ],
  },
  {
    id: 'moment',
    name: 'Moment',
    upgrade: 'Moment 2.29.4 or later',
    advisories: [
      {
        ids: ['CVE-2016-4055', 'GHSA-87vv-r9j6-g5qv'],
        severity: 'medium',
        summary: 'Regular expression denial of service in duration parsing',
        range: '<2.11.2',
        fixed: ['2.11.2'],
      },
      {
        ids: ['CVE-2017-18214', 'GHSA-446m-mv8f-q348'],
        severity: 'high',
        summary: 'Regular expression denial of service in date parsing',
        range: '<2.19.3',
        fixed: ['2.19.3'],
      },
      {
        ids: ['CVE-2022-24785', 'GHSA-8hfj-j24r-96c4'],
        severity: 'high',
        summary: 'Path traversal through a user-supplied locale name in moment.locale()',
        range: '<2.29.2',
        fixed: ['2.29.2'],
      },
      {
        ids: ['CVE-2022-31129', 'GHSA-wc69-rhjr-hc9g'],
        severity: 'high',
        summary: 'Quadratic-time RFC 2822 date parsing on long user input (denial of service)',
        range: '>=2.18.0 <2.29.4',
        fixed: ['2.29.4'],
      },
    ],
    endOfLife: [],
  },
  {
    id: 'handlebars',
    name: 'Handlebars',
    upgrade: 'Handlebars 4.7.9 or later',
    advisories: [
      {
        ids: ['CVE-2015-8861', 'GHSA-9prh-257w-9277'],
        severity: 'medium',
        summary: 'XSS through unquoted attribute values',
        range: '<4.0.0',
        fixed: ['4.0.0'],
      },
      {
        ids: ['GHSA-q42p-pg8m-cqh6'],
        severity: 'high',
        summary: 'Prototype pollution through templates',
        range: '<3.0.7 || >=4.0.0 <4.0.14 || >=4.1.0 <4.1.2',
        fixed: ['3.0.7', '4.0.14', '4.1.2'],
      },
      {
        ids: ['CVE-2019-19919', 'GHSA-w457-6q6x-cgp9'],
        severity: 'critical',
        summary: 'Prototype pollution leading to remote code execution through templates',
        range: '<4.3.0',
        fixed: ['4.3.0'],
      },
      {
        ids: ['CVE-2019-20922', 'GHSA-62gr-4qp9-h98f'],
        severity: 'high',
        summary: 'Regular expression denial of service while processing templates',
        range: '>=4.0.0 <4.4.5',
        fixed: ['4.4.5'],
      },
      {
        ids: ['GHSA-2cf5-4w76-r9qv'],
        severity: 'high',
        summary: 'Arbitrary code execution through the lookup helper',
        range: '<3.0.8 || >=4.0.0 <4.5.2',
        fixed: ['3.0.8', '4.5.2'],
      },
      {
        ids: ['CVE-2019-20920', 'GHSA-3cqr-58rm-57f8'],
        severity: 'high',
        summary: 'Arbitrary code execution through templates (lookup helper)',
        range: '<3.0.8 || >=4.0.0 <4.5.3',
        fixed: ['3.0.8', '4.5.3'],
      },
      {
        ids: ['GHSA-q2c6-c6pm-g3gh'],
        severity: 'high',
        summary: 'Arbitrary code execution through the lookup helper (incomplete earlier fix)',
        range: '<3.0.8 || >=4.0.0 <4.5.3',
        fixed: ['3.0.8', '4.5.3'],
      },
      {
        ids: ['GHSA-g9r4-xpmj-mj65'],
        severity: 'high',
        summary: 'Prototype pollution through malicious templates',
        range: '<3.0.8 || >=4.0.0 <4.5.3',
        fixed: ['3.0.8', '4.5.3'],
      },
      {
        ids: ['CVE-2021-23369', 'GHSA-f2jv-r9rf-7988'],
        severity: 'critical',
        summary: 'Remote code execution when compiling untrusted templates',
        range: '<4.7.7',
        fixed: ['4.7.7'],
      },
      {
        ids: ['CVE-2021-23383', 'GHSA-765h-qjxv-5f44'],
        severity: 'critical',
        summary: 'Prototype pollution when compiling untrusted templates',
        range: '<4.7.7',
        fixed: ['4.7.7'],
      },
      {
        ids: ['CVE-2026-33937', 'GHSA-2w6w-674q-4c4q'],
        severity: 'critical',
        summary: 'JavaScript injection through AST type confusion in compile()',
        range: '>=4.0.0 <=4.7.8',
        fixed: ['4.7.9'],
      },
      {
        ids: ['CVE-2026-33938', 'GHSA-3mfm-83xf-c92r'],
        severity: 'high',
        summary: 'JavaScript injection through AST type confusion by tampering with @partial-block',
        range: '>=4.0.0 <=4.7.8',
        fixed: ['4.7.9'],
      },
      {
        ids: ['CVE-2026-33940', 'GHSA-xhpv-hc6g-r9c6'],
        severity: 'high',
        summary: 'JavaScript injection through AST type confusion when an object is passed as a dynamic partial',
        range: '>=4.0.0 <=4.7.8',
        fixed: ['4.7.9'],
      },
      {
        ids: ['CVE-2026-33939', 'GHSA-9cx6-37pm-9jff'],
        severity: 'high',
        summary: 'Denial of service through malformed decorator syntax in template compilation',
        range: '>=4.0.0 <=4.7.8',
        fixed: ['4.7.9'],
      },
      {
        ids: ['CVE-2026-33916', 'GHSA-2qvq-rjwj-gvw9'],
        severity: 'medium',
        summary: 'Prototype pollution leading to XSS through partial template injection',
        range: '>=4.0.0 <4.7.9',
        fixed: ['4.7.9'],
      },
      {
        ids: ['GHSA-7rx3-28cr-v5wh'],
        severity: 'medium',
        summary: 'Prototype method access control gap: __lookupSetter__ missing from the blocklist',
        range: '>=4.6.0 <=4.7.8',
        fixed: ['4.7.9'],
      },
      {
        ids: ['GHSA-442j-39wm-28r2'],
        severity: 'low',
        summary: 'Property access validation bypass in container.lookup',
        range: '>=4.0.0 <=4.7.8',
        fixed: ['4.7.9'],
      },
    ],
    endOfLife: [],
  },
  {
    id: 'dompurify',
    name: 'DOMPurify',
    upgrade: 'DOMPurify 3.4.13 or later',
    advisories: [
      {
        ids: ['CVE-2020-26870', 'GHSA-63q7-h895-m982'],
        severity: 'medium',
        summary: 'Mutation XSS: a serialize-parse round trip changes the namespace of sanitized markup',
        range: '<2.0.17',
        fixed: ['2.0.17'],
      },
      {
        ids: ['CVE-2024-48910', 'GHSA-p3vf-v8qc-cwcr'],
        severity: 'critical',
        summary: 'Sanitizer tampering through prototype pollution',
        range: '<2.4.2',
        fixed: ['2.4.2'],
      },
      {
        ids: ['CVE-2024-47875', 'GHSA-gx9m-whjm-85jf'],
        severity: 'high',
        summary: 'Nesting-based mutation XSS',
        range: '<2.5.0 || >=3.0.0 <3.1.3',
        fixed: ['2.5.0', '3.1.3'],
      },
      {
        ids: ['CVE-2024-45801', 'GHSA-mmhx-hmjr-r674'],
        severity: 'high',
        summary: 'Depth-check bypass through special nesting, and tampering through prototype pollution',
        range: '<2.5.4 || >=3.0.0 <3.1.3',
        fixed: ['2.5.4', '3.1.3'],
      },
      {
        ids: ['CVE-2025-26791', 'GHSA-vhxf-7vqr-mrjg'],
        severity: 'medium',
        summary: 'Mutation XSS through an incorrect template-literal regular expression with SAFE_FOR_TEMPLATES',
        range: '<3.2.4',
        fixed: ['3.2.4'],
      },
      {
        ids: ['GHSA-h8r8-wccr-v5f2'],
        severity: 'medium',
        summary: 'Mutation XSS through re-contextualization',
        range: '<3.3.2',
        fixed: ['3.3.2'],
      },
      {
        ids: ['GHSA-cmwh-pvxp-8882'],
        severity: 'medium',
        summary: 'Permanent ALLOWED_ATTR pollution through setConfig() bypassing the hook clone guard',
        range: '<=3.4.10',
        fixed: ['3.4.11'],
      },
      {
        ids: ['GHSA-55q2-fjhq-7xh7'],
        severity: 'medium',
        summary: 'IN_PLACE hook removal leaves a detached subtree executable (XSS)',
        range: '<=3.4.12',
        fixed: ['3.4.13'],
      },
    ],
    endOfLife: [],
  },
  {
    id: 'vue',
    name: 'Vue',
    upgrade: 'Vue 3',
    // Vue 2's open advisory (CVE-2024-9506, a low-severity ReDoS in the template compiler) has no fix in
    // any 2.x release; it is named in the end-of-life note rather than raised as a warning of its own.
    advisories: [],
    endOfLife: [
      {
        range: '<3.0.0',
        note:
          'Vue 2 reached end of life on 31 December 2023 and receives no more fixes (CVE-2024-9506 in its template compiler stays ' +
          'open).',
      },
    ],
  },
]

const BY_ID = new Map(VULNERABLE_LIBRARIES.map((entry) => [entry.id, entry]))

/** The table entry for a detector's library id. */
export function libraryEntry(id: string): LibraryEntry | undefined {
  return BY_ID.get(id)
}
