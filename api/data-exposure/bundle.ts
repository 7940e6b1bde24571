// What an app's own page and JavaScript reveal about its data backends: Supabase project URL, anon or
// publishable key and table names; Firebase Realtime Database URL and project id. Pure functions over
// text; nothing here fetches anything.

export interface Source {
  /** Where the text came from: a script URL, or the page URL for the HTML and its inline scripts. */
  url: string
  text: string
}

export type SupabaseKeyKind = 'anon' | 'publishable'

export interface SupabaseFound {
  projectUrl: string
  key: { kind: SupabaseKeyKind; value: string } | null
  tables: string[]
  /** Further project URLs seen, not probed. */
  otherProjectUrls: string[]
}

export interface FirebaseFound {
  databaseURL: string | null
  projectId: string | null
  /** A Firebase web API key (AIza...) is present: public by design, noted only. */
  webApiKey: boolean
}

export interface BundleFindings {
  supabase: SupabaseFound | null
  firebase: FirebaseFound | null
  /** Secrets that must never ship to a browser (service_role JWT, sb_secret_ key), described, never quoted. */
  leakedSecrets: Array<{ kind: 'supabase_service_role_jwt' | 'supabase_secret_key'; where: string }>
}

export const MAX_TABLES = 20

const JWT_RE = /eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g
const PUBLISHABLE_RE = /\bsb_publishable_[A-Za-z0-9_-]{10,}/g
const SECRET_RE = /\bsb_secret_[A-Za-z0-9_-]{10,}/g
const SUPABASE_HOST_RE = /https:\/\/([a-z0-9]{10,40})\.supabase\.(?:co|in)\b/g
const REST_URL_RE = /(https?:\/\/[A-Za-z0-9.-]+(?::\d{1,5})?(?:\/[A-Za-z0-9._~-]+)*?)\/rest\/v1\b/g
// VITE_SUPABASE_URL: "...", NEXT_PUBLIC_SUPABASE_URL="...", supabaseUrl: '...'
const ENV_URL_RE = /(?:SUPABASE_URL|supabaseUrl)["']?\s*[:=]\s*["'`](https?:\/\/[^"'`\s]+)["'`]/g
// createClient("https://...", "eyJ..."), minified or not: a URL literal followed by a key literal.
const CLIENT_CALL_RE =
  /\(\s*(["'`])(https?:\/\/[^"'`\s]+)\1\s*,\s*(["'`])(eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}|sb_publishable_[A-Za-z0-9_-]{10,})\3/g
// .from('todos'), .from("todos"), .from(`todos`) with a single argument; `who` is what it is called on.
const FROM_RE = /([A-Za-z0-9_$]*)\s*\.\s*from\(\s*(["'`])([A-Za-z_][A-Za-z0-9_]{0,62})\2\s*\)/g
const REST_TABLE_RE = /\/rest\/v1\/([A-Za-z_][A-Za-z0-9_]{0,62})(?![A-Za-z0-9_/])/g
const NOT_TABLES = /^(?:storage|Array|Buffer|Object|Set|Map|Promise|Observable|Rx|rxjs|Iterator|AsyncIterator|[A-Z][A-Za-z0-9]*Array)$/

const FIREBASE_DB_HOST_RE = /https:\/\/[a-z0-9-]+(?:\.[a-z0-9-]+)?\.(?:firebaseio\.com|firebasedatabase\.app)\b/g
const FIREBASE_DB_KEY_RE = /databaseURL["']?\s*:\s*["'`](https?:\/\/[^"'`\s]+)["'`]/g
const FIREBASE_PROJECT_RE = /projectId["']?\s*:\s*["'`]([a-z0-9-]{4,40})["'`]/g
const FIREBASE_WEB_KEY_RE = /\bAIza[0-9A-Za-z_-]{35}\b/

/** The payload of a JWT, or null when it is not one. The signature is not checked: only the claims matter. */
export function jwtClaims(token: string): Record<string, unknown> | null {
  const part = token.split('.')[1]
  if (!part) return null
  try {
    const json = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'))
    return json && typeof json === 'object' && !Array.isArray(json) ? json : null
  } catch {
    return null
  }
}

const trimUrl = (u: string) => {
  try {
    const parsed = new URL(u)
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return null
    if (parsed.username || parsed.password) return null
    return (parsed.origin + parsed.pathname).replace(/\/+$/, '')
  } catch {
    return null
  }
}

const supabaseRef = (projectUrl: string) => /^https:\/\/([a-z0-9]+)\.supabase\.(?:co|in)$/.exec(projectUrl)?.[1] ?? null

function pushUnique<T>(list: T[], value: T | null) {
  if (value !== null && !list.includes(value)) list.push(value)
}

/** What the sources hold, gathered source by source before the project, key and database are chosen. */
interface Seen {
  projects: string[]
  pairs: Array<{ url: string; key: string }>
  anon: Array<{ value: string; ref: string | null }>
  publishable: string[]
  tables: string[]
  leakedSecrets: BundleFindings['leakedSecrets']
  fbUrls: string[]
  projectId: string | null
  webApiKey: boolean
}

export function findInBundle(sources: Source[]): BundleFindings {
  const seen: Seen = {
    projects: [],
    pairs: [],
    anon: [],
    publishable: [],
    tables: [],
    leakedSecrets: [],
    fbUrls: [],
    projectId: null,
    webApiKey: false,
  }
  for (const { url: where, text } of sources) {
    seeSupabaseProjects(seen, text)
    seeSupabaseKeys(seen, text, where)
    seeTables(seen, text)
    seeFirebase(seen, text)
  }
  const firebase =
    seen.fbUrls.length || seen.projectId
      ? { databaseURL: seen.fbUrls[0] ?? null, projectId: seen.projectId, webApiKey: seen.webApiKey }
      : null
  return { supabase: supabaseOf(seen), firebase, leakedSecrets: seen.leakedSecrets }
}

/** Project URLs: createClient's first argument (paired with its key), supabase.co hosts, REST URLs, env values. */
function seeSupabaseProjects(seen: Seen, text: string): void {
  for (const m of text.matchAll(CLIENT_CALL_RE)) {
    const u = trimUrl(m[2]!)
    if (u) {
      seen.pairs.push({ url: u, key: m[4]! })
      pushUnique(seen.projects, u)
    }
  }
  for (const m of text.matchAll(SUPABASE_HOST_RE)) pushUnique(seen.projects, `https://${m[1]}.supabase.co`)
  for (const m of text.matchAll(REST_URL_RE)) pushUnique(seen.projects, trimUrl(m[1]!))
  for (const m of text.matchAll(ENV_URL_RE)) pushUnique(seen.projects, trimUrl(m[1]!))
}

/** Anon JWTs (with the project ref they name) and publishable keys; service_role JWTs and secret keys as leaks. */
function seeSupabaseKeys(seen: Seen, text: string, where: string): void {
  const { anon, leakedSecrets } = seen
  for (const m of text.matchAll(JWT_RE)) {
    const claims = jwtClaims(m[0])
    if (!claims) continue
    if (claims.role === 'anon' && !anon.some((a) => a.value === m[0])) {
      anon.push({ value: m[0], ref: typeof claims.ref === 'string' ? claims.ref : null })
    } else if (claims.role === 'service_role' && !leakedSecrets.some((s) => s.kind === 'supabase_service_role_jwt' && s.where === where)) {
      leakedSecrets.push({ kind: 'supabase_service_role_jwt', where })
    }
  }
  for (const m of text.matchAll(PUBLISHABLE_RE)) pushUnique(seen.publishable, m[0])
  if (SECRET_RE.test(text) && !leakedSecrets.some((s) => s.kind === 'supabase_secret_key' && s.where === where)) {
    leakedSecrets.push({ kind: 'supabase_secret_key', where })
  }
  SECRET_RE.lastIndex = 0
}

/** Table names from .from('name') (not on Array, Promise and the like) and /rest/v1/name, at most MAX_TABLES. */
function seeTables(seen: Seen, text: string): void {
  for (const m of text.matchAll(FROM_RE)) {
    if (NOT_TABLES.test(m[1]!)) continue
    if (seen.tables.length < MAX_TABLES) pushUnique(seen.tables, m[3]!)
  }
  for (const m of text.matchAll(REST_TABLE_RE)) {
    if (m[1] === 'rpc') continue
    if (seen.tables.length < MAX_TABLES) pushUnique(seen.tables, m[1]!)
  }
}

/** Realtime Database URLs, the first project id, and whether a web API key is present. */
function seeFirebase(seen: Seen, text: string): void {
  for (const m of text.matchAll(FIREBASE_DB_KEY_RE)) pushUnique(seen.fbUrls, trimUrl(m[1]!))
  for (const m of text.matchAll(FIREBASE_DB_HOST_RE)) pushUnique(seen.fbUrls, trimUrl(m[0]))
  seen.projectId ??= FIREBASE_PROJECT_RE.exec(text)?.[1] ?? null
  FIREBASE_PROJECT_RE.lastIndex = 0
  seen.webApiKey ||= FIREBASE_WEB_KEY_RE.test(text)
}

/** The Supabase project and key the app uses, chosen among what was seen. */
function supabaseOf({ projects, pairs, anon, publishable, tables }: Seen): SupabaseFound | null {
  const isKey = (k: string) => anon.some((a) => a.value === k) || publishable.includes(k)
  // The project the app's own client is created with wins; then a supabase.co project whose ref an anon
  // key names; then the first one seen.
  const projectUrl =
    pairs.find((p) => isKey(p.key))?.url ??
    projects.find((p) => anon.some((a) => a.ref !== null && a.ref === supabaseRef(p))) ??
    projects[0] ??
    null
  if (!projectUrl) return null
  const ref = supabaseRef(projectUrl)
  const paired = pairs.find((p) => p.url === projectUrl && isKey(p.key))?.key
  const keyValue =
    paired ??
    anon.find((a) => ref !== null && a.ref === ref)?.value ??
    anon.find((a) => a.ref === null || ref === null)?.value ??
    publishable[0] ??
    null
  return {
    projectUrl,
    key: keyValue ? { kind: keyValue.startsWith('sb_publishable_') ? 'publishable' : 'anon', value: keyValue } : null,
    tables,
    otherProjectUrls: projects.filter((p) => p !== projectUrl),
  }
}

/** Same-origin script URLs a script loads further (ES module imports, dynamic imports), resolved. */
export function importedScripts(text: string, scriptUrl: string): string[] {
  const out: string[] = []
  const re = /(?:\bimport\s*\(\s*|\bfrom\s*|\bimport\s*)(["'`])((?:\.{1,2}\/|\/)[^"'`\s]+?\.m?js(?:\?[^"'`\s]*)?)\1/g
  for (const m of text.matchAll(re)) {
    try {
      pushUnique(out, new URL(m[2]!, scriptUrl).href)
    } catch {}
  }
  return out
}
