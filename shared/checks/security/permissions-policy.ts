// Permissions-Policy (a Structured Fields dictionary, RFC 8941) and its deprecated predecessor Feature-Policy.

import { defineCheck } from '../types.ts'
import { headerFixes } from '../util/fix.ts'
import { headerValue } from '../util/http.ts'
import { metaHttpEquiv } from '../util/html.ts'

const RECOMMENDED = 'camera=(), microphone=(), geolocation=(), payment=(), usb=(), browsing-topics=()'

/** Features that reach hardware, location, payments or identity: worth keeping from other sites' frames. */
export const POWERFUL_FEATURES = new Set([
  'accelerometer',
  'ambient-light-sensor',
  'bluetooth',
  'browsing-topics',
  'camera',
  'clipboard-read',
  'clipboard-write',
  'display-capture',
  'geolocation',
  'gyroscope',
  'hid',
  'identity-credentials-get',
  'local-fonts',
  'magnetometer',
  'microphone',
  'midi',
  'otp-credentials',
  'payment',
  'publickey-credentials-create',
  'publickey-credentials-get',
  'serial',
  'storage-access',
  'usb',
  'window-management',
  'xr-spatial-tracking',
])

export interface Allowlist {
  /** `*`: every origin, including any site that frames or is framed by the page. */
  all: boolean
  self: boolean
  origins: string[]
}

export type PermissionsPolicyParse = { ok: true; features: Map<string, Allowlist>; ignored: string[] } | { ok: false; error: string }

const KEY = /^[a-z*][a-z0-9_\-.*]*/
const TOKEN = /^[A-Za-z*][!#$%&'*+\-.^_`|~0-9A-Za-z:/]*/
const PARAMS =
  /^(?:[ \t]*;[ \t]*[a-z*][a-z0-9_\-.*]*(?:=(?:"(?:[^"\\]|\\["\\])*"|[A-Za-z*][!#$%&'*+\-.^_`|~0-9A-Za-z:/]*|-?\d+(?:\.\d+)?|\?[01]))?)*/

type Item = { kind: 'token' | 'string'; value: string } | { kind: 'other'; value: string }

/** One bare item at the start of `s`: a token, a string, or anything else SF allows (number, boolean, bytes). */
function bareItem(s: string): { item: Item; rest: string } | null {
  if (s.startsWith('"')) {
    // biome-ignore lint/suspicious/noControlCharactersInRegex: a structured-field string may not hold control characters (RFC 8941)
    const m = /^"((?:[^"\\\x00-\x1f\x7f]|\\["\\])*)"/.exec(s)
    if (!m) return null
    return { item: { kind: 'string', value: m[1]!.replace(/\\(["\\])/g, '$1') }, rest: s.slice(m[0].length) }
  }
  const token = TOKEN.exec(s)
  if (token) return { item: { kind: 'token', value: token[0] }, rest: s.slice(token[0].length) }
  const other = /^(?:-?\d+(?:\.\d+)?|\?[01]|:[A-Za-z0-9+/=]*:)/.exec(s)
  if (other) return { item: { kind: 'other', value: other[0] }, rest: s.slice(other[0].length) }
  return null
}

function allowlistOf(items: Item[]): Allowlist | null {
  const list: Allowlist = { all: false, self: false, origins: [] }
  for (const item of items) {
    if (item.kind === 'token' && item.value === '*') list.all = true
    else if (item.kind === 'token' && item.value === 'self') list.self = true
    else if (item.kind === 'string') list.origins.push(item.value)
    else return null
  }
  return list
}

/**
 * Parses a Permissions-Policy value as browsers do: a syntax error anywhere drops the whole header;
 * a member whose value is not an allowlist (e.g. `camera` alone, `camera=?1`) is ignored by itself.
 * The last occurrence of a repeated feature wins.
 */
export function parsePermissionsPolicy(value: string): PermissionsPolicyParse {
  const parsed = parseDictionary(value)
  if (parsed.ok || !/'(?:none|self|src)'|^\s*[a-z-]+[ \t]+(?:\*|https?:)/i.test(value)) return parsed
  return {
    ok: false,
    error: `${parsed.error} (it looks like Feature-Policy syntax: Permissions-Policy is written camera=(), not camera 'none')`,
  }
}

function parseDictionary(value: string): PermissionsPolicyParse {
  const features = new Map<string, Allowlist>()
  const ignored: string[] = []
  let s = value.trim()
  if (s === '') return { ok: true, features, ignored }
  for (;;) {
    const key = KEY.exec(s)
    if (!key) return { ok: false, error: `expected a lower-case feature name at "${s.slice(0, 40)}"` }
    const name = key[0]
    s = s.slice(name.length)
    let items: Item[] | null = []
    if (s.startsWith('=')) {
      s = s.slice(1)
      if (s.startsWith('(')) {
        s = s.slice(1)
        for (;;) {
          s = s.replace(/^ +/, '')
          if (s.startsWith(')')) {
            s = s.slice(1)
            break
          }
          const parsed = bareItem(s)
          if (!parsed) return { ok: false, error: `invalid allowlist item for ${name} at "${s.slice(0, 40)}"` }
          items.push(parsed.item)
          s = parsed.rest.replace(PARAMS, '')
          if (!/^[ )]/.test(s)) return { ok: false, error: `invalid allowlist for ${name} at "${s.slice(0, 40)}"` }
        }
      } else {
        const parsed = bareItem(s)
        if (!parsed) return { ok: false, error: `invalid value for ${name} at "${s.slice(0, 40)}"` }
        items.push(parsed.item)
        s = parsed.rest
      }
    } else {
      items = null // boolean true: not an allowlist
    }
    s = s.replace(PARAMS, '')
    const list = items ? allowlistOf(items) : null
    if (list) features.set(name, list)
    else {
      features.delete(name)
      ignored.push(name)
    }
    s = s.replace(/^[ \t]+/, '')
    if (s === '') return { ok: true, features, ignored }
    if (!s.startsWith(',')) return { ok: false, error: `expected "," after ${name} at "${s.slice(0, 40)}"` }
    s = s.slice(1).replace(/^[ \t]+/, '')
    if (s === '') return { ok: false, error: 'trailing comma' }
  }
}

/** Feature-Policy: `feature 'none'; other 'self' https://a.example` (features whose list contains `*` are open). */
function featurePolicyOpen(value: string): string[] {
  return value
    .split(';')
    .map((part) => part.trim().split(/\s+/))
    .filter((tokens) => tokens.length > 1 && tokens.slice(1).includes('*'))
    .map((tokens) => tokens[0]!.toLowerCase())
}

export const permissionsPolicy = defineCheck({
  id: 'permissions-policy',
  category: 'security',
  title: 'Permissions-Policy limits powerful browser features',
  failTitle: 'Permissions-Policy does not limit powerful browser features',
  description:
    'Reads the Permissions-Policy header of the main response (and the deprecated Feature-Policy), parsed as a Structured Fields ' +
    'dictionary the way browsers do.',
  why:
    'Permissions-Policy turns off features the site does not use (camera, microphone, geolocation, payment, USB) for the page and ' +
    'every frame in it, so injected script or a compromised third-party frame cannot prompt visitors for them.',
  confirmation:
    'Passes when a Permissions-Policy header parses and allows no powerful feature (camera, microphone, geolocation, display-capture,' +
    ' payment, usb, serial, hid, bluetooth, midi, clipboard-read, ...) to every origin. Reports info, not a finding, when it grants ' +
    'such a feature to "*", listing them: that can be intended (a video-call embed) and needs a look. Warns when the header is ' +
    'missing, when only Feature-Policy is sent (deprecated and replaced by Permissions-Policy, which Chromium applies instead when ' +
    "both are sent), when the header does not parse (browsers then drop all of it, e.g. Feature-Policy syntax camera 'none' in a " +
    'Permissions-Policy header), or when it restricts nothing. Not findings: unknown or future feature names, members ignored one by ' +
    'one, and a policy that does not mention a feature (its default applies). A <meta http-equiv="Permissions-Policy"> is reported ' +
    'but not counted: browsers do not support it.',
  severity: 'low',
  fix: {
    generic: `Send "Permissions-Policy: ${RECOMMENDED}" and add the features you do use with the origins that need them, e.g. camera=(self "https://meet.example.com"). Remove Feature-Policy once Permissions-Policy is sent.`,
    ...headerFixes([{ key: 'Permissions-Policy', value: RECOMMENDED }]),
  },
  fixTarget: { kind: 'headers', headers: ['permissions-policy'] },
  requires: ['mainResponse'],
  optional: ['page'],
  run: ({ mainResponse, page }) => {
    const header = headerValue(mainResponse.headers, 'permissions-policy')
    const featurePolicy = headerValue(mainResponse.headers, 'feature-policy')
    const meta = page ? metaHttpEquiv(page.html, 'permissions-policy') : []
    const evidence: Record<string, unknown> = { url: mainResponse.url, header, featurePolicy }
    if (meta.length > 0) {
      evidence.meta = meta
      evidence.metaNote = 'Browsers do not support Permissions-Policy in a <meta> tag; send it as a header.'
    }

    if (header === null) {
      if (featurePolicy !== null) {
        evidence.featurePolicyOpenToAll = featurePolicyOpen(featurePolicy)
        evidence.note =
          "Feature-Policy is deprecated and replaced by Permissions-Policy, which has a different syntax: rewrite it, e.g. camera 'none' becomes camera=()."
        return { status: 'warn', evidence, summary: 'Only the deprecated Feature-Policy header is sent; Permissions-Policy is missing.' }
      }
      return {
        status: 'warn',
        evidence,
        summary: 'No Permissions-Policy header: powerful features keep their defaults for the page and its frames.',
      }
    }

    const parsed = parsePermissionsPolicy(header)
    if (!parsed.ok) {
      evidence.error = parsed.error
      return { status: 'warn', evidence, summary: `Permissions-Policy does not parse, so browsers ignore all of it: ${parsed.error}.` }
    }
    const disabled = [...parsed.features].filter(([, l]) => !l.all && !l.self && l.origins.length === 0).map(([n]) => n)
    const openToAll = [...parsed.features].filter(([n, l]) => l.all && POWERFUL_FEATURES.has(n)).map(([n]) => n)
    evidence.features = parsed.features.size
    evidence.disabled = disabled
    evidence.openToAll = openToAll
    if (parsed.ignored.length > 0) evidence.ignored = parsed.ignored
    if (featurePolicy !== null)
      evidence.note =
        'Feature-Policy is also sent; browsers that implement Permissions-Policy apply it instead, so Feature-Policy can be removed.'

    if (parsed.features.size === 0) {
      return { status: 'warn', evidence, summary: 'Permissions-Policy is sent but restricts no feature.' }
    }
    if (openToAll.length > 0) {
      return {
        status: 'info',
        evidence,
        summary: `Permissions-Policy allows ${openToAll.join(', ')} to every origin (*); check that this is intended.`,
      }
    }
    return {
      status: 'pass',
      evidence,
      summary: `Permissions-Policy is set for ${parsed.features.size} feature(s)${disabled.length > 0 ? `, ${disabled.length} disabled` : ''}.`,
    }
  },
})
