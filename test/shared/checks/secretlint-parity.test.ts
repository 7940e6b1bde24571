// The secret formats shared with secretlint's recommended preset, checked against it: every sample the
// preset reports is a secret for js-secrets too, and neither reports anything in real minified libraries.
// secretlint is a development dependency only: the scanner keeps its own linear rules (docs/checks.md says
// why), and this test keeps the two in step.
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { lintSource } from '@secretlint/core'
import { creator } from '@secretlint/secretlint-rule-preset-recommend'
import { scanScripts } from '../../../shared/checks/util/secrets.ts'
import { noise } from './artifacts.ts'

const config = { rules: [{ id: '@secretlint/secretlint-rule-preset-recommend', rule: creator }] }

async function secretlint(content: string): Promise<string[]> {
  const result = await lintSource({
    source: { filePath: '/bundle.js', content, contentType: 'text', ext: '.js' },
    options: { config } as Parameters<typeof lintSource>[0]['options'],
  })
  return result.messages.map((m) => m.ruleId)
}

const hex = (n: number, seed: number) => noise(n, seed, '0123456789abcdef')
const alnum = (n: number, seed: number) => noise(n, seed)
const letters = (n: number, seed: number) => noise(n, seed, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz')

/** Fabricated tokens of each shared format, built at run time so no credential-shaped literal sits in the source. */
const SAMPLES: Array<[string, string]> = [
  ['stripe-secret-key', ['sk', 'live', alnum(32, 1)].join('_')],
  [
    'aws-access-key',
    `aws_access_key_id = AKIA${noise(16, 2, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567')}\naws_secret_access_key = ${alnum(40, 3)}`,
  ],
  ['github-token', `ghp_${alnum(36, 4)}`],
  ['slack-token', `xoxb-${noise(12, 5, '0123456789')}-${noise(13, 6, '0123456789')}-${alnum(24, 7)}`],
  ['openai-api-key', `sk-proj-${alnum(74, 8)}T3BlbkFJ${alnum(74, 28)}`],
  ['anthropic-api-key', `sk-ant-api03-${alnum(93, 9)}AA`],
  ['npm-access-token', `npm_${alnum(36, 10)}`],
  ['gitlab-token', `glpat-${alnum(20, 11)}`],
  ['sendgrid-api-key', `SG.${alnum(22, 12)}.${alnum(43, 13)}`],
  ['huggingface-token', `hf_${letters(34, 14)}`],
  ['groq-api-key', `gsk_${alnum(52, 15)}`],
  ['shopify-token', `shpat_${hex(32, 16)}`],
  ['linear-api-key', `lin_api_${alnum(40, 17)}`],
  ['notion-token', `ntn_${noise(11, 18, '0123456789')}${alnum(35, 19)}`],
  ['tailscale-key', `tskey-auth-${alnum(16, 20)}-${alnum(32, 21)}`],
  ['figma-token', `figd_${alnum(43, 22)}`],
  ['cloudflare-token', `cfut_${alnum(40, 23)}${hex(8, 24)}`],
  ['private-key', `-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA${alnum(48, 25)}\n${alnum(64, 26)}\n-----END RSA PRIVATE KEY-----`],
  ['connection-string-password', `postgres://app:${alnum(16, 27)}@db.internal:5432/app`],
]

describe('secret formats shared with secretlint', () => {
  for (const [kind, value] of SAMPLES) {
    test(`${kind}: secretlint reports it, and so does js-secrets`, async () => {
      // As a config file or a bundle would hold it: on lines of its own.
      const body = `// settings\n${value}\n`
      expect((await secretlint(body)).length).toBeGreaterThan(0)
      const ours = scanScripts([{ url: 'https://example.com/app.js', inline: false, body }]).filter((f) => f.exposure === 'secret')
      expect(ours.map((f) => f.kind)).toContain(kind)
    })
  }

  test('real minified libraries: no finding from either', async () => {
    const glob = new Bun.Glob('node_modules/**/*.min.js')
    const root = join(import.meta.dir, '..', '..', '..')
    const files = [...glob.scanSync({ cwd: root })].sort().slice(0, 60)
    expect(files.length).toBeGreaterThan(20)
    const found: string[] = []
    for (const file of files) {
      const body = readFileSync(join(root, file), 'utf8')
      for (const f of scanScripts([{ url: file, inline: false, body }])) if (f.exposure !== 'public') found.push(`${file}: ${f.kind}`)
      for (const rule of await secretlint(body)) found.push(`${file}: secretlint ${rule}`)
    }
    expect(found).toEqual([])
  }, 60_000)
})
