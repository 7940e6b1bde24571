// Server-generated directory indexes (autoindex) on the main URL or any probed path.

import { defineCheck, type HttpResponseArtifact, type ProbeResult } from '../types.ts'
import { decodeEntities } from '../util/html.ts'
import { clip } from '../util/http.ts'

/** Markers sit near the top of a listing; names come from the first part of it. */
const SCAN = 32_768
const MAX_NAMES = 8
const MAX_LISTINGS = 10

interface Server {
  name: string
  /** Must all match in the first SCAN characters. */
  markers: RegExp[]
}

const SERVERS: Server[] = [
  // nginx autoindex, lighttpd, Apache (mod_autoindex): a title or heading "Index of /path" plus a parent link or listing markup.
  {
    name: 'Apache',
    markers: [/<(?:title|h1)>\s*Index of \/[^<]{0,300}<\/(?:title|h1)>/i, />\s*Parent Directory\s*<\/a>|<a href="\?C=N;O=D">/i],
  },
  {
    name: 'nginx',
    markers: [/<(?:title|h1)>\s*Index of \/[^<]{0,300}<\/(?:title|h1)>/i, /<a href="\.\.\/">\.\.\/<\/a>|<hr>\s*<pre>/i],
  },
  {
    name: 'lighttpd',
    markers: [/<(?:title|h2)>\s*Index of \/[^<]{0,300}<\/(?:title|h2)>/i, /<div class="list">|<th class="n">/i],
  },
  { name: 'IIS', markers: [/\[To Parent Directory\]/i, /<pre>/i] },
  { name: 'IIS', markers: [/<h1>[^<]{1,200} - \/[^<]{0,300}<\/h1>\s*<hr>/i, /&lt;dir&gt;/i] },
  { name: 'Python http.server', markers: [/<(?:title|h1)>\s*Directory listing for \/[^<]{0,300}<\/(?:title|h1)>/i] },
  { name: 'Node serve-index', markers: [/<title>\s*listing directory \/[^<]{0,300}<\/title>/i] },
]

const HREF = /<a\s[^>]{0,300}?href\s*=\s*"([^"]{1,500})"/gi

/** Entries read from a listing to look for keys, backups and logs. */
const MAX_ENTRIES = 500
/** serve-index's entries: <a href=".." class="icon icon-directory" title="name">. */
const SERVE_INDEX_ENTRY = /<a href="[^"]{0,1000}" class="([^"]{0,200})"\s*title="([^"]{1,300})">/gi

/** Entry names of a listing, at most `max`: its links, without parent, sort and absolute links; serve-index's titles. */
function entryNames(body: string, max: number, scan: number): string[] {
  const names: string[] = []
  // serve-index puts its styles (icons as data: URLs) before the entries: its list is read further down.
  const serveIndexScan = Math.max(scan, 4 * SCAN)
  if (body.slice(0, serveIndexScan).includes('<ul id="files"')) {
    for (const m of body.slice(0, serveIndexScan).matchAll(SERVE_INDEX_ENTRY)) {
      const name = decodeEntities(m[2]!)
      if (name === '..' || name === '.') continue
      const entry = clip(name + (/\bicon-directory\b/.test(m[1]!) && !name.endsWith('/') ? '/' : ''), 100)
      if (!names.includes(entry)) names.push(entry)
      if (names.length >= max) break
    }
    return names
  }
  for (const m of body.slice(0, scan).matchAll(HREF)) {
    const href = decodeEntities(m[1]!)
    if (
      /^[^<]{0,20}\[To Parent Directory\]/i.test(body.slice(m.index + m[0].length, m.index + m[0].length + 60).replace(/^[^>]{0,100}>/, ''))
    )
      continue
    if (href.startsWith('?') || href.startsWith('../') || href === '..' || href === '/' || /^[a-z][a-z0-9+.-]*:/i.test(href)) continue
    let name = href
    try {
      name = decodeURIComponent(href)
    } catch {
      // keep it encoded
    }
    if (name.startsWith('/')) {
      // IIS links are absolute: keep the last segment.
      const parts = name.split('/').filter(Boolean)
      name = parts.length > 0 ? parts[parts.length - 1]! + (name.endsWith('/') ? '/' : '') : name
    }
    if (!names.includes(name)) names.push(clip(name, 100))
    if (names.length >= max) break
  }
  return names
}

/** Entry names of a listing: the first few, as evidence. */
export function listedNames(body: string): string[] {
  return entryNames(body, MAX_NAMES, SCAN)
}

/** What a listed name is, when it is worse than an ordinary file: keys and credentials, backups and dumps, logs. */
const SENSITIVE: ReadonlyArray<[kind: 'keys' | 'backups' | 'logs', test: RegExp]> = [
  ['keys', /\.(?:key|pem|pub|p12|pfx|jks|keystore|kdbx|ppk|asc|gpg|crt|der)$|^id_(?:rsa|dsa|ecdsa|ed25519)\b|^\.htpasswd$|^\.env\b/i],
  ['backups', /\.(?:bak|backup|old|orig|save|sql|dump|tar|tgz|gz|zip|7z|rar)$|~$/i],
  ['logs', /\.log(?:\.[\w.-]{1,40})?$/i],
]

/** The listed names that are keys, backups or logs (a few of each), read over the whole listing. */
export function sensitiveEntries(body: string): Partial<Record<'keys' | 'backups' | 'logs', string[]>> {
  const out: Partial<Record<'keys' | 'backups' | 'logs', string[]>> = {}
  for (const name of entryNames(body, MAX_ENTRIES, body.length)) {
    const hit = SENSITIVE.find(([, re]) => re.test(name.replace(/\/$/, '')))
    if (!hit) continue
    const list = (out[hit[0]] ??= [])
    if (list.length < MAX_NAMES) list.push(name)
  }
  return out
}

/** The server whose autoindex page this is, or null. */
export function directoryListingServer(body: string): string | null {
  const head = body.slice(0, SCAN)
  if (!head.includes('<')) return null
  for (const server of SERVERS) if (server.markers.every((m) => m.test(head))) return server.name
  return null
}

interface Answer {
  url: string
  status: number
  body: string
}

const answers = (main: HttpResponseArtifact, probes: Record<string, ProbeResult>): Answer[] => [
  { url: main.url, status: main.status, body: main.body },
  ...Object.values(probes).filter((p) => p.status !== 0 && !p.error),
]

export const directoryListing = defineCheck({
  id: 'directory-listing',
  category: 'exposure',
  title: 'Directories are not listed',
  failTitle: 'Directories are listed',
  description:
    'Looks for server-generated directory indexes (autoindex) in the main response and in every probed path, including common static ' +
    'directories such as /assets/, /static/ and /uploads/, the folders Node apps list with serve-index (/ftp, /encryptionkeys, ' +
    '/support/logs) and up to 3 same-origin folders the page links (a link ending in "/", or the folder of a linked file).',
  why:
    'A directory listing shows every file in the folder, including backups, uploads and files that were never linked, so attackers do ' +
    'not need to guess names.',
  confirmation:
    'Confirmed by the page\u2019s content, never by status code: nginx and Apache "Index of /..." title or heading with a ' +
    'parent-directory link or listing markup, lighttpd\u2019s listing table, IIS "[To Parent Directory]" or its <dir> entries, Python' +
    ' http.server "Directory listing for /...", Node serve-index "listing directory /...". Medium; high when a listing holds keys or ' +
    'credentials (.key, .pem, .pub, .kdbx, id_rsa...), backups and dumps (.bak, .old, .sql, archives, name~) or logs (.log, ' +
    'access.log.2026-11-29). Not findings: an "Index of" phrase in ' +
    'ordinary page text, a single-page app answering index.html for a directory, a 403 or 404 for a directory. Evidence: the URL, the' +
    ' server that produced the listing, the first few listed names (keys, backups and logs first) and those of each kind.',
  severity: 'medium',
  fix: {
    generic:
      'Turn off automatic directory indexes on the web server and put an index file or a 404 in directories that must stay reachable.',
    vercel:
      'Vercel does not list directories; a listing comes from an app or a proxied origin: turn off its directory index (e.g. Express ' +
      'serve-index, or directoryListing: false in serve.json for the serve package).',
    netlify:
      'Netlify does not list directories; a listing comes from a proxied origin ([[redirects]] with status 200 to another host): turn ' +
      'off autoindex on that origin.',
    nextjs:
      'Next.js does not list directories; remove any serve-index middleware from a custom server (server.js) and let unknown paths 404.',
    nginx: 'In the server block (and any location that enables it):\nautoindex off;\nApache: Options -Indexes in the vhost or .htaccess.',
    cloudflare:
      'Turn off the listing at the origin (nginx autoindex off; Apache Options -Indexes). Until then: Security > WAF > Custom rules > ' +
      '(http.request.uri.path in {"/assets/" "/static/" "/uploads/"}) -> Block.',
    express: 'Remove serve-index (app.use(serveIndex(...))); express.static lists nothing by itself.',
    django:
      'Remove django.views.static.serve with show_indexes=True from urls.py, and turn off listings on the server that serves STATIC_ROOT.',
    rails: 'Rails lists nothing; the listing comes from the server in front (nginx autoindex off; Apache Options -Indexes).',
    apache: 'In .htaccess or the <Directory> block:\nOptions -Indexes',
    caddy: 'In the site block: file_server without the browse subdirective (file_server, not file_server browse).',
    iis: 'In web.config, inside <system.webServer>:\n<directoryBrowse enabled="false" />',
  },
  requires: ['mainResponse', 'probes'],
  run: ({ mainResponse, probes }) => {
    const listings: Array<{
      url: string
      status: number
      server: string
      names: string[]
      sensitive?: ReturnType<typeof sensitiveEntries>
    }> = []
    const seen = new Set<string>()
    let checked = 0
    for (const answer of answers(mainResponse, probes)) {
      checked++
      if (seen.has(answer.url)) continue
      seen.add(answer.url)
      const server = directoryListingServer(answer.body)
      if (!server) continue
      if (listings.length >= MAX_LISTINGS) continue
      const sensitive = sensitiveEntries(answer.body)
      const flagged = Object.values(sensitive).flat()
      // The names shown lead with the keys, backups and logs, then the first others.
      const names = [...new Set([...flagged, ...listedNames(answer.body)])].slice(0, MAX_NAMES)
      listings.push({ url: answer.url, status: answer.status, server, names, ...(flagged.length > 0 ? { sensitive } : {}) })
    }
    if (listings.length === 0)
      return {
        status: 'pass',
        evidence: { checked },
        summary: `No directory listing in the main response or ${checked - 1} probed path(s).`,
      }
    // A listing that holds keys, backups or logs leads, and makes the finding high.
    const first = listings.find((l) => l.sensitive) ?? listings[0]!
    const kinds = [...new Set(listings.flatMap((l) => Object.keys(l.sensitive ?? {})))]
    return {
      status: 'fail',
      ...(kinds.length > 0 ? { severity: 'high' as const } : {}),
      evidence: { url: first.url, listings },
      summary: `${first.url} is a directory listing (${first.server})${first.names.length > 0 ? `: ${first.names.slice(0, 3).join(', ')}${first.names.length > 3 ? ', ...' : ''}` : ''}${listings.length > 1 ? `; ${listings.length - 1} more listing(s)` : ''}${kinds.length > 0 ? `. Listed: ${kinds.join(', ')}` : ''}.`,
    }
  },
})
