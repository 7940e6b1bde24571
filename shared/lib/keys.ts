// API keys: act_ + 32 random bytes in base62. Only the SHA-256 hash and a short display prefix are stored.
import { randomBytes } from 'node:crypto'
import { base62, sha256Hex } from './ids.ts'

export const API_KEY_PREFIX = 'act_'
export const OAUTH_TOKEN_PREFIX = 'mca_'

export interface NewSecret {
  /** Shown once to its owner, never stored or logged. */
  plaintext: string
  hash: string
  /** Enough to recognise the key in a list: act_ and the first 6 characters. */
  displayPrefix: string
}

export function newSecret(prefix: string): NewSecret {
  const plaintext = prefix + base62(randomBytes(32))
  return { plaintext, hash: sha256Hex(plaintext), displayPrefix: plaintext.slice(0, prefix.length + 6) }
}

/** Bearer credentials we issue: a known prefix and base62 only, so junk is refused before any lookup. */
export function looksLikeCredential(token: string): boolean {
  return /^(act|mca)_[0-9A-Za-z]{40,60}$/.test(token)
}
