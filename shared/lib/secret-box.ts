// Secrets kept at rest (a connected repository's token): AES-256-GCM with a key from the environment
// (SECRETS_KEY), a fresh 96-bit IV per seal, and the purpose bound as additional data so a sealed value
// cannot be moved to another column or row. Sealed form: "v1.<keyId>.<iv>.<ciphertext||tag>" (base64url),
// where keyId names the key (first 8 hex digits of its SHA-256), so a rotation can decrypt with the
// previous key until everything is re-sealed (README, "Patches and connected repositories"; api/patches/rotate-secrets.ts).
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto'

export class SecretBoxError extends Error {}

interface Key {
  id: string
  bytes: Buffer
}

function parseKey(b64: string): Key {
  const bytes = Buffer.from(b64.trim(), 'base64')
  if (bytes.length !== 32) throw new SecretBoxError('a secrets key must be 32 bytes in base64 (openssl rand -base64 32)')
  return { id: createHash('sha256').update(bytes).digest('hex').slice(0, 8), bytes }
}

export class SecretBox {
  private readonly current: Key
  private readonly byId = new Map<string, Key>()

  /** `key`: the current key (base64); `previous`: keys still accepted for opening during a rotation. */
  constructor(key: string, previous: string[] = []) {
    this.current = parseKey(key)
    for (const k of [this.current, ...previous.filter((p) => p.trim()).map(parseKey)]) this.byId.set(k.id, k)
  }

  /** From the configuration; null when no SECRETS_KEY is set (features that store secrets are then refused). */
  static fromConfig(config: { SECRETS_KEY: string; SECRETS_KEY_PREVIOUS: string }): SecretBox | null {
    if (!config.SECRETS_KEY) return null
    return new SecretBox(config.SECRETS_KEY, config.SECRETS_KEY_PREVIOUS.split(','))
  }

  get keyId(): string {
    return this.current.id
  }

  seal(plaintext: string, purpose: string): string {
    const iv = randomBytes(12)
    const c = createCipheriv('aes-256-gcm', this.current.bytes, iv)
    c.setAAD(Buffer.from(purpose))
    const body = Buffer.concat([c.update(plaintext, 'utf8'), c.final(), c.getAuthTag()])
    return `v1.${this.current.id}.${iv.toString('base64url')}.${body.toString('base64url')}`
  }

  /** The plaintext; SecretBoxError (never naming the value) for a foreign key, a wrong purpose or tampering. */
  open(sealed: string, purpose: string): string {
    const parts = sealed.split('.')
    if (parts.length !== 4 || parts[0] !== 'v1') throw new SecretBoxError('not a sealed secret')
    const key = this.byId.get(parts[1]!)
    if (!key) throw new SecretBoxError(`sealed with key ${parts[1]}, which is not configured`)
    const iv = Buffer.from(parts[2]!, 'base64url')
    const body = Buffer.from(parts[3]!, 'base64url')
    if (iv.length !== 12 || body.length < 16) throw new SecretBoxError('not a sealed secret')
    try {
      const d = createDecipheriv('aes-256-gcm', key.bytes, iv)
      d.setAAD(Buffer.from(purpose))
      d.setAuthTag(body.subarray(body.length - 16))
      return Buffer.concat([d.update(body.subarray(0, body.length - 16)), d.final()]).toString('utf8')
    } catch {
      throw new SecretBoxError('the sealed secret does not open with its key (tampered, or sealed for another purpose)')
    }
  }

  /** Whether a sealed value was sealed with an older key and should be re-sealed. */
  isStale(sealed: string): boolean {
    return sealed.split('.')[1] !== this.current.id
  }
}
