// Every secret rule tells a real-shaped value from the placeholder that documentation prints in its place,
// and connection strings carry their password in any of the forms applications write them.
import { describe, expect, test } from 'bun:test'
import { pageSecrets } from '../../../shared/checks/secrets/page-secrets.ts'
import { isPlaceholderSecret, scanScripts } from '../../../shared/checks/util/secrets.ts'
import { makeArtifacts, noise } from './artifacts.ts'

const UPPER_DIGITS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'

/** A prefix and a random part as each provider issues them; the placeholder keeps the prefix and the length. */
const FORMATS: Array<{ kind: string; prefix: string; length: number; alphabet?: string; suffix?: string }> = [
  { kind: 'stripe-secret-key', prefix: 'sk_live_', length: 24 },
  { kind: 'stripe-restricted-key', prefix: 'rk_live_', length: 32 },
  { kind: 'stripe-test-secret-key', prefix: 'sk_test_', length: 24 },
  { kind: 'aws-access-key-id', prefix: 'AKIA', length: 16, alphabet: UPPER_DIGITS },
  { kind: 'github-token', prefix: 'ghp_', length: 36 },
  { kind: 'github-token', prefix: 'github_pat_', length: 82 },
  { kind: 'openai-api-key', prefix: 'sk-proj-', length: 48 },
  { kind: 'openai-api-key', prefix: 'sk-', length: 48 },
  { kind: 'anthropic-api-key', prefix: 'sk-ant-api03-', length: 93 },
  { kind: 'npm-access-token', prefix: 'npm_', length: 36 },
  { kind: 'gitlab-token', prefix: 'glpat-', length: 20 },
  { kind: 'groq-api-key', prefix: 'gsk_', length: 52 },
  { kind: 'shopify-token', prefix: 'shpat_', length: 32 },
  { kind: 'linear-api-key', prefix: 'lin_api_', length: 40 },
  { kind: 'supabase-secret-key', prefix: 'sb_secret_', length: 32 },
  { kind: 'figma-token', prefix: 'figd_', length: 40 },
]

/** What documentation and templates print instead of a key, at the key's length. */
function placeholders(length: number): string[] {
  return [
    'X'.repeat(length),
    'x'.repeat(length),
    '0'.repeat(length),
    'a'.repeat(length),
    `your${'_key_here'.repeat(8)}`.slice(0, length),
    `XXXX${noise(length - 4, 7)}`,
    'abc123'.repeat(20).slice(0, length),
    `REPLACEME${'0'.repeat(length)}`.slice(0, length),
  ]
}

const kindsIn = (body: string) => scanScripts([{ url: 'https://example.com/app.js', inline: false, body }]).map((f) => f.kind)

describe('secret placeholders', () => {
  test('every provider format: a random value is found, its placeholders never are', () => {
    for (const [i, f] of FORMATS.entries()) {
      const real = `${f.prefix}${noise(f.length, 40 + i, f.alphabet)}`
      expect({ value: real, kinds: kindsIn(`const k = "${real}";`) }).toEqual({ value: real, kinds: [f.kind] })
      for (const p of placeholders(f.length)) {
        const value = `${f.prefix}${p}`
        expect({ value, kinds: kindsIn(`const k = "${value}";`) }).toEqual({ value, kinds: [] })
      }
    }
  })

  test('a docs page quoting placeholders in a code block is no finding', () => {
    const body =
      '<pre><code>STRIPE_SECRET_KEY=sk_live_XXXXXXXXXXXXXXXXXXXXXXXX\nGITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n' +
      'OPENAI_API_KEY=sk-proj-XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX\nSTRIPE=sk_live_&lt;your-key&gt;</code></pre>'
    const r = pageSecrets.run(makeArtifacts({ mainResponse: { body: `<html><body>${body}</body></html>` } }))
    expect(r.status).toBe('pass')
  })

  test('isPlaceholderSecret judges the random part, not the prefix', () => {
    expect(isPlaceholderSecret(`sk_live_${noise(24, 3)}`)).toBe(false)
    expect(isPlaceholderSecret('sk_live_XXXXXXXXXXXXXXXXXXXXXXXX')).toBe(true)
    expect(isPlaceholderSecret('sk_live_<your-key>')).toBe(true)
    expect(isPlaceholderSecret('ghp_1111111111111111111111111111111111aa')).toBe(true)
  })
})

describe('connection strings', () => {
  const password = noise(14, 61)
  const forms = [
    `postgres://shop:${password}@db.internal:5432/shop`,
    `postgresql://shop:${password}@10.0.0.5/shop?sslmode=require`,
    `mysql://root:${password}@127.0.0.1:3306/shop`,
    `mongodb+srv://app:${password}@cluster0.ab1cd.mongodb.net/prod`,
    `redis://:${password}@cache.internal:6379/0`,
    `rediss://default:${password}@cache.internal:6380`,
    `amqp://guest2:${password}@mq.internal:5672/vhost`,
    `mssql://sa:${password}@sql.internal:1433/shop`,
    `jdbc:mysql://db.internal:3306/shop?user=shop&password=${password}`,
    `jdbc:postgresql://db.internal/shop?ssl=true&user=shop&password=${password}&loglevel=2`,
    `Server=tcp:sql.internal,1433;Database=shop;User Id=sa;Password=${password};`,
    `Data Source=sql.internal;Initial Catalog=shop;User ID=shop;Pwd=${password}`,
  ]

  test('each form with a password is critical, in an HTML comment and in a script', () => {
    for (const form of forms) {
      const r = pageSecrets.run(makeArtifacts({ mainResponse: { body: `<html><body><!-- db: ${form} --><h1>Shop</h1></body></html>` } }))
      expect({ form, status: r.status, severity: r.severity }).toEqual({ form, status: 'fail', severity: 'critical' })
      expect(JSON.stringify(r.evidence)).not.toContain(password)
      expect({ form, kinds: kindsIn(`const db = "${form}";`) }).toEqual({ form, kinds: ['connection-string-password'] })
    }
  })

  test('placeholder passwords and template variables in every form are no finding', () => {
    for (const pw of ['password', 'changeme', '${DB_PASSWORD}', '<password>', 'xxxxxxxx', '%DB_PASS%']) {
      for (const form of forms) {
        const value = form.replace(password, pw)
        expect({ value, kinds: kindsIn(`const db = "${value}";`) }).toEqual({ value, kinds: [] })
      }
    }
  })
})
