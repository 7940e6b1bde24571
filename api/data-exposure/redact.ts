// Redaction of data read from a site, before it reaches a result: keys stay, values are masked.
// Strings keep their first two characters ("Bu…"), short strings keep none; numbers and booleans become
// "#"; e-mail addresses and phone numbers, and any value under a secret-looking key, are masked whole.

const EMAIL_RE = /^[^\s@]{1,64}@[^\s@]{1,255}\.[^\s@]{2,}$/
const PHONE_RE = /^\+?[0-9][0-9 ().\-/]{5,24}$/
const SECRET_KEY_RE = /pass(?:word|wd)?|secret|token|api[_-]?key|private|credential|session|cookie|salt|hash|ssn|iban|card/i
const MAX_DEPTH = 4
const MAX_KEYS = 50
const MAX_ITEMS = 3

export const MASK = { email: '[email]', phone: '[phone]', secret: '[redacted]', number: '#', short: '…' } as const

function isPhone(s: string) {
  if (!PHONE_RE.test(s)) return false
  const digits = s.replace(/\D/g, '').length
  return digits >= 7 && digits <= 15
}

export function redactString(s: string): string {
  const t = s.trim()
  if (EMAIL_RE.test(t)) return MASK.email
  if (isPhone(t)) return MASK.phone
  // Two characters of a short value would give most of it away.
  if ([...t].length <= 3) return MASK.short
  return `${[...t].slice(0, 2).join('')}…`
}

/** A redacted copy of a JSON value: same shape and keys, masked values. */
export function redact(value: unknown, key = '', depth = 0): unknown {
  if (value === null || value === undefined) return null
  if (key && SECRET_KEY_RE.test(key)) return MASK.secret
  if (typeof value === 'string') return redactString(value)
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return MASK.number
  if (depth >= MAX_DEPTH) return MASK.short
  if (Array.isArray(value)) {
    const items = value.slice(0, MAX_ITEMS).map((v) => redact(v, key, depth + 1))
    return value.length > MAX_ITEMS ? [...items, `… ${value.length - MAX_ITEMS} more`] : items
  }
  if (typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value as Record<string, unknown>).slice(0, MAX_KEYS)) out[k] = redact(v, k, depth + 1)
    return out
  }
  return MASK.short
}
