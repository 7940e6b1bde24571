// Random identifiers and secrets: base62 so they survive URLs, logs and copy-paste unchanged.
import { createHash, randomBytes } from 'node:crypto'

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

export function base62(bytes: Uint8Array): string {
  let n = 0n
  for (const b of bytes) n = (n << 8n) | BigInt(b)
  let out = ''
  while (n > 0n) {
    out = ALPHABET[Number(n % 62n)] + out
    n /= 62n
  }
  // Fixed width for a given byte length, so two secrets never differ in length.
  const width = Math.ceil((bytes.length * 8) / Math.log2(62))
  return out.padStart(width, '0')
}

/** `prefix_` followed by 16 random bytes in base62, e.g. scn_3kT... */
export const newId = (prefix: string) => `${prefix}_${base62(randomBytes(16))}`

export const sha256Hex = (s: string) => createHash('sha256').update(s).digest('hex')
