// The fix for vulnerable-js-library computed from what was found: each library by its own name and fixed
// version, and where its copy comes from (a CDN URL in the page's HTML, or the app's dependencies).

import type { Platform } from '../types.ts'

/** npm package names where a library's id is not its package name. */
const NPM_NAMES: Record<string, string> = {
  angularjs: 'angular',
  'backbone.js': 'backbone',
  'jquery.datatables': 'datatables.net',
  'mustache.js': 'mustache',
  tinyMCE: 'tinymce',
  highlightjs: 'highlight.js',
  'pdf.js': 'pdfjs-dist',
  nextjs: 'next',
  ckeditor: 'ckeditor4',
  AlaSQL: 'alasql',
  jPlayer: 'jplayer',
  froala: 'froala-editor',
}

/** Hosts that serve published library files by version. */
const CDN_HOST =
  /(?:^|\.)(?:cdnjs\.cloudflare\.com|cdn\.jsdelivr\.net|unpkg\.com|code\.jquery\.com|ajax\.googleapis\.com|ajax\.aspnetcdn\.com|(?:stackpath|maxcdn|netdna)\.bootstrapcdn\.com|cdn\.bootcdn\.net|cdn\.staticfile\.org|esm\.sh|cdn\.skypack\.dev|code\.angularjs\.org)$/i

interface Found {
  library: string
  id: string
  version: string
  scripts: string[]
  fixedVersion: string | null
  upgrade: string
}

function asFound(value: unknown): Found | null {
  if (!value || typeof value !== 'object') return null
  const v = value as Record<string, unknown>
  if (typeof v.library !== 'string' || typeof v.version !== 'string') return null
  return {
    library: v.library,
    id: typeof v.id === 'string' ? v.id : v.library.toLowerCase(),
    version: v.version,
    scripts: Array.isArray(v.scripts) ? v.scripts.filter((s): s is string => typeof s === 'string') : [],
    fixedVersion: typeof v.fixedVersion === 'string' ? v.fixedVersion : null,
    upgrade: typeof v.upgrade === 'string' ? v.upgrade : 'a supported release',
  }
}

function cdnScript(scripts: string[]): string | null {
  for (const s of scripts) {
    try {
      if (CDN_HOST.test(new URL(s).hostname)) return s
    } catch {}
  }
  return null
}

/** Where the bundled copy is rebuilt from, per platform. */
function rebuild(platform: Platform): string {
  switch (platform) {
    case 'vercel':
    case 'netlify':
      return 'commit the lockfile and redeploy'
    case 'nextjs':
      return 'then next build'
    default:
      return 'then rebuild and deploy the front end'
  }
}

/** One line per library found: its own name, the version to move to, and where its copy is changed. */
export function libraryAdvice(evidence: Record<string, unknown>, platform: Platform): string | null {
  // A scan's result lists its libraries under findings; an audit's finding is about one library.
  const listed = Array.isArray(evidence.findings) ? evidence.findings : [evidence]
  const findings = listed.map(asFound).filter((f): f is Found => f !== null)
  if (findings.length === 0) return null
  const lines = findings.slice(0, 10).map((f) => {
    const target = f.fixedVersion ?? f.upgrade
    const pkg = NPM_NAMES[f.id] ?? f.id
    const cdn = cdnScript(f.scripts)
    if (cdn) {
      return (
        `- ${f.library} ${f.version} is loaded from ${cdn}: change the version in that <script src> (in the page's HTML, ` +
        `e.g. index.html or the layout template) to ${target}, and update or add its integrity hash.`
      )
    }
    const version = f.fixedVersion ? `${pkg}@^${f.fixedVersion}` : `${pkg}@latest`
    return (
      `- ${f.library} ${f.version} (${f.scripts[0] ?? 'a script of the page'}): in package.json, npm install ${version} ` +
      `(or "overrides": { "${pkg}": "${f.fixedVersion ?? 'latest'}" } when another package pulls it in; npm ls ${pkg} shows ` +
      `which), ${rebuild(platform)}. A copy committed as a file (a vendor/ or public/ folder) is replaced by the ${target} release.`
    )
  })
  const more = findings.length > 10 ? `\n- and ${findings.length - 10} more in the evidence.` : ''
  return `Upgrade each library found:\n${lines.join('\n')}${more}`
}
