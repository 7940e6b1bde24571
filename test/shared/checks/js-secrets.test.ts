import { describe, expect, test } from 'bun:test'
import { jsSecrets } from '../../../shared/checks/secrets/js-secrets.ts'
import type { ScriptArtifact } from '../../../shared/checks/types.ts'
import { jwt, makeArtifacts, noise, script } from './artifacts.ts'
import { countRegexWork } from '../../harness/regex-work.ts'

// Secret-shaped values are assembled at run time from noise; none is real.
const STRIPE_LIVE = ['sk', 'live', noise(32, 11)].join('_')
const STRIPE_RESTRICTED = ['rk', 'live', noise(32, 12)].join('_')
const STRIPE_TEST = ['sk', 'test', noise(32, 13)].join('_')
const STRIPE_PUBLISHABLE = ['pk', 'live', noise(32, 14)].join('_')
const AWS_ID = `AKIA${noise(16, 15, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567')}`
const AWS_SECRET = noise(40, 16, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/+')
const GITHUB = `ghp_${noise(36, 17)}`
const OPENAI = `sk-proj-${noise(48, 18)}`
const SLACK = ['xoxb', noise(11, 22, '0123456789'), noise(12, 23, '0123456789'), noise(24, 24)].join('-')
const SLACK_WEBHOOK = `https://hooks.slack.com/services/T${noise(9, 25, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789')}/B${noise(9, 26, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789')}/${noise(24, 27)}`
const ANTHROPIC = `sk-ant-api03-${noise(93, 28)}`
const FIREBASE = `AIza${noise(35, 19)}`
const SB_SECRET = `sb_secret_${noise(32, 20)}`
const SB_PUBLISHABLE = `sb_publishable_${noise(32, 21)}`
const ANON_JWT = jwt({ iss: 'supabase', ref: 'abcdefghijklmnop', role: 'anon', iat: 1700000000, exp: 2000000000 })
const SERVICE_JWT = jwt({ iss: 'supabase', ref: 'abcdefghijklmnop', role: 'service_role', iat: 1700000000, exp: 2000000000 })

const run = (...bodies: string[]) =>
  jsSecrets.run(makeArtifacts({ scripts: bodies.map((b, i): ScriptArtifact => script(`https://example.com/assets/chunk-${i}.js`, b)) }))

type Finding = { kind: string; value: string; script: string; line: number; column: number; offset: number }
const findings = (r: ReturnType<typeof run>) => r.evidence.findings as Finding[]

describe('js-secrets', () => {
  test('passes a bundle without keys', () => {
    const r = run('function a(b){return b+1}export{a};')
    expect(r.status).toBe('pass')
    expect(r.evidence.total).toBe(0)
  })

  test('fails a Stripe live secret key, critical, with a redacted value and its position', () => {
    const body = `var x=1;\nconst stripe=Stripe("${STRIPE_LIVE}");`
    const r = run(body)
    expect(r.status).toBe('fail')
    expect(r.severity).toBe('critical')
    const [f] = findings(r)
    expect(f).toMatchObject({
      kind: 'stripe-secret-key',
      script: 'https://example.com/assets/chunk-0.js',
      line: 2,
      offset: body.indexOf(STRIPE_LIVE),
    })
    expect(f!.value).toBe(`${STRIPE_LIVE.slice(0, 8)}…${STRIPE_LIVE.slice(-4)}`)
    expect(JSON.stringify(r.evidence)).not.toContain(STRIPE_LIVE)
  })

  test('fails restricted Stripe keys, GitHub, Slack, OpenAI, Anthropic and Supabase secret keys', () => {
    for (const [value, kind] of [
      [SLACK, 'slack-token'],
      [SLACK_WEBHOOK, 'slack-webhook-url'],
      [ANTHROPIC, 'anthropic-api-key'],
      [`sk-${noise(48, 29)}`, 'openai-api-key'],
      [STRIPE_RESTRICTED, 'stripe-restricted-key'],
      [GITHUB, 'github-token'],
      [OPENAI, 'openai-api-key'],
      [SB_SECRET, 'supabase-secret-key'],
    ] as const) {
      const r = run(`const k="${value}";`)
      expect(r.status).toBe('fail')
      expect(findings(r)[0]!.kind).toBe(kind)
    }
  })

  test('raises an AWS access key id to critical when a secret access key is nearby', () => {
    const alone = run(`const id="${AWS_ID}";`)
    expect(alone.status).toBe('fail')
    expect(alone.severity).toBe('high')
    const paired = run(`const c={accessKeyId:"${AWS_ID}",secretAccessKey:"${AWS_SECRET}"};`)
    expect(paired.severity).toBe('critical')
    expect(findings(paired)[0]!.kind).toBe('aws-access-key')
  })

  test('reports documentation example keys (AWS, Stripe) as info, never as a failure', () => {
    const r = run(`const id="AKIAIOSFODNN7EXAMPLE";const k="${['sk', 'test', '4eC39HqLyjWDarjtT1zdp7dc'].join('_')}";`)
    expect(r.status).toBe('info')
    expect(JSON.stringify(r.evidence)).toContain('aws-access-key-id-documentation-example')
    expect(JSON.stringify(r.evidence)).toContain('stripe-secret-key-documentation-example')
  })

  test('fails a Supabase service_role JWT, decoded without verification', () => {
    const r = run(`createClient("https://x.supabase.co","${SERVICE_JWT}")`)
    expect(r.status).toBe('fail')
    expect(findings(r)[0]!.kind).toBe('supabase-service-role-key')
  })

  test('reports a Supabase anon JWT as info only: public by design', () => {
    const r = run(`createClient("https://x.supabase.co","${ANON_JWT}")`)
    expect(r.status).toBe('info')
    expect(findings(r)[0]!.kind).toBe('supabase-anon-key')
  })

  test('reports Firebase web keys, Stripe publishable keys and sb_publishable_ keys as info', () => {
    const r = run(`initializeApp({apiKey:"${FIREBASE}"});Stripe("${STRIPE_PUBLISHABLE}");createClient(u,"${SB_PUBLISHABLE}")`)
    expect(r.status).toBe('info')
    expect(
      findings(r)
        .map((f) => f.kind)
        .sort(),
    ).toEqual(['firebase-api-key', 'stripe-publishable-key', 'supabase-publishable-key'])
  })

  test('warns for a Stripe test-mode secret key', () => {
    expect(run(`Stripe("${STRIPE_TEST}")`).status).toBe('warn')
  })

  test('does not match sk- inside minified identifiers, class names or content hashes', () => {
    const body = [
      `var task-${noise(40, 30)};`,
      `el.className="sk-fading-circle sk-circle-bounce-delay-animation-xx";`,
      `import("./sk-0123456789abcdef0123456789abcdef01234567.js");`,
      `const disk_${noise(40, 31)}=1;`,
      `x.risk-${noise(40, 32)}`,
      `"sk-${'a'.repeat(48)}"`,
    ].join('')
    expect(run(body).status).toBe('pass')
  })

  test('does not match a key prefix inside a longer identifier', () => {
    expect(run(`var xsk_live_${noise(30, 33)}=1;`).status).toBe('pass')
  })

  test('reports the same value once with its occurrence count, public keys ranked after secrets', () => {
    const r = run(`a("${FIREBASE}");b("${STRIPE_LIVE}");c("${STRIPE_LIVE}")`, `d("${STRIPE_LIVE}")`)
    expect(r.evidence.total).toBe(2)
    expect(findings(r)[0]).toMatchObject({ kind: 'stripe-secret-key', occurrences: 3 })
  })

  test('caps evidence at 20 findings', () => {
    const body = Array.from({ length: 30 }, (_, i) => `k${i}("ghp_${noise(36, 100 + i)}");`).join('')
    const r = run(body)
    expect(r.evidence.total).toBe(30)
    expect(findings(r)).toHaveLength(20)
    expect(r.evidence.truncated).toBe(true)
  })

  test('reads 2 MB of minified JavaScript once per pattern, finding the one secret in it', () => {
    const chunk = (i: number) =>
      `function f${i}(e,t){var n=e.task-${noise(12, i)},r="eyJ${noise(60, i + 1)}";return t.className="sk-spinner sk-${noise(8, i)}",` +
      `n.src="data:image/png;base64,${noise(300, i + 2, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/')}",` +
      `r+"AKIA"+"sk_live_"+"pk_"+${i}*2}`
    const parts: string[] = []
    let size = 0
    for (let i = 0; size < 2_000_000; i++) {
      const c = chunk(i)
      parts.push(c)
      size += c.length
    }
    parts.splice(Math.floor(parts.length * 0.9), 0, `;const k="${STRIPE_LIVE}";`)
    const body = parts.join('')
    expect(body.length).toBeGreaterThan(2_000_000)

    const { value: r, scanned } = countRegexWork(() => run(body))
    expect(r.status).toBe('fail')
    expect(r.evidence.total).toBe(1)
    // Each of the check's patterns reads the bundle once (26 times in all): never once per match or line.
    expect(scanned).toBeLessThanOrEqual(32 * body.length)
  })

  test('stays linear on adversarial runs of token characters', () => {
    const body = `${(`eyJ${'A'.repeat(97)}`).repeat(20_000)}sk-${'a1B2'.repeat(20_000)}${'AKIA'.repeat(50_000)}`
    const { scanned } = countRegexWork(() => run(body))
    expect(scanned).toBeLessThanOrEqual(32 * body.length)
  })
})
