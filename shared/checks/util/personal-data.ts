// Personal data and credentials in a JSON answer, counted (never quoted): e-mail addresses, password hashes
// and password fields, phone numbers under phone-like keys, and tokens under token-like keys. Bounded walk.
import { looksRandom } from './secrets.ts'

export interface PersonalDataCounts {
  /** Distinct e-mail addresses. */
  emails: number
  /** Values shaped as password hashes (bcrypt, argon2, scrypt, PBKDF2, SHA-crypt). */
  passwordHashes: number
  /** Non-empty values under a password-like key that are not hashes (plain text or an unknown hash). */
  passwordFields: number
  /** Values with 7+ digits under a phone-like key. */
  phones: number
  /** Random-looking values of 16+ characters under a token-like key. */
  tokens: number
  /** Objects in the answer: a list of people is many objects with e-mails. */
  records: number
}

const EMAIL = /^[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63})*\.[A-Za-z]{2,24}$/
// Starts only where a run of address characters starts: linear on long runs without an @.
const EMAIL_IN_TEXT = /(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63})*\.[A-Za-z]{2,24}\b/g
const PASSWORD_HASH =
  /^(?:\$2[abxy]?\$\d{2}\$[./A-Za-z0-9]{53}|\$argon2(?:id|i|d)\$[^\s"]{20,}|\$scrypt\$[^\s"]{20,}|\$[56]\$[^\s"$]{0,40}\$?[./A-Za-z0-9]{43,86}|pbkdf2_sha(?:1|256|512)\$\d+\$[^\s"$]+\$[^\s"]+|\$pbkdf2-sha(?:1|256|512)\$[^\s"]{20,})$/
const PASSWORD_HASH_IN_TEXT = /\$2[abxy]?\$\d{2}\$[./A-Za-z0-9]{53}|\$argon2(?:id|i|d)\$v=\d+\$[^\s"]{20,}/g
const PASSWORD_KEY =
  /^(?:pass(?:word|wd)?|pwd|user_?pass(?:word)?|password_?(?:hash|digest)|hashed_?password|encrypted_?password|pw_?hash)$/i
const PHONE_KEY = /phone|mobile|^(?:tel|cell|msisdn)(?:_?(?:number|no))?$|_(?:tel|cell)$/i
const TOKEN_KEY = /(?:token|api_?key|secret|session_?id|private_?key)$/i
/** Tokens handed to anonymous visitors by design: CSRF, pagination cursors, captcha and nonces. */
const PUBLIC_TOKEN_KEY = /csrf|xsrf|page|cursor|next|continuation|captcha|nonce|publishable|site_?key|public/i

/** Nodes visited at most per answer: big lists are counted from their first part. */
const MAX_NODES = 20_000
const MAX_DEPTH = 20

export function emptyCounts(): PersonalDataCounts {
  return { emails: 0, passwordHashes: 0, passwordFields: 0, phones: 0, tokens: 0, records: 0 }
}

/** Counts personal data in a JSON value. */
export function countPersonalData(value: unknown): PersonalDataCounts {
  const counts = emptyCounts()
  const emails = new Set<string>()
  let nodes = 0
  const visit = (v: unknown, key: string, depth: number): void => {
    if (++nodes > MAX_NODES || depth > MAX_DEPTH) return
    if (typeof v === 'string') {
      judgeString(v, key, counts, emails)
      return
    }
    if (typeof v === 'number' && PHONE_KEY.test(key) && String(v).length >= 7) counts.phones++
    if (Array.isArray(v)) {
      for (const item of v) visit(item, key, depth + 1)
      return
    }
    if (v && typeof v === 'object') {
      counts.records++
      for (const [k, child] of Object.entries(v)) visit(child, k, depth + 1)
    }
  }
  visit(value, '', 0)
  counts.emails = emails.size
  return counts
}

function judgeString(v: string, key: string, counts: PersonalDataCounts, emails: Set<string>): void {
  if (v.length === 0 || v.length > 4_096) return
  if (PASSWORD_HASH.test(v)) counts.passwordHashes++
  else if (PASSWORD_KEY.test(key)) counts.passwordFields++
  else if (v.length <= 254 && EMAIL.test(v)) emails.add(v.toLowerCase())
  else if (PHONE_KEY.test(key) && (v.match(/\d/g)?.length ?? 0) >= 7 && /^[\d\s()+.-]{7,30}$/.test(v)) counts.phones++
  else if (TOKEN_KEY.test(key) && !PUBLIC_TOKEN_KEY.test(key) && v.length >= 16 && !/\s/.test(v) && looksRandom(v, 10)) counts.tokens++
}

/** The same counts from text that is not whole JSON (a truncated answer): e-mails and recognisable hashes only. */
export function countInText(text: string): PersonalDataCounts {
  const counts = emptyCounts()
  counts.emails = new Set([...text.slice(0, 512 * 1024).matchAll(EMAIL_IN_TEXT)].slice(0, 5_000).map((m) => m[0].toLowerCase())).size
  counts.passwordHashes = [...text.matchAll(PASSWORD_HASH_IN_TEXT)].slice(0, 5_000).length
  return counts
}

/** JSON.parse, or undefined. */
export function parseJson(body: string): unknown {
  const head = body.trimStart()[0]
  if (head !== '{' && head !== '[') return undefined
  try {
    return JSON.parse(body)
  } catch {
    return undefined
  }
}
