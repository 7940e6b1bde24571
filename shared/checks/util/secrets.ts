// Provider-specific secret patterns for JavaScript bundles. Every pattern starts with a literal prefix,
// refuses to start inside an identifier, and has bounded repeats, so a scan stays linear on megabytes of
// minified code. Values never leave this module unredacted.

import type { CheckOutcome, ScriptArtifact, Severity } from '../types.ts'
import { CONNECTION_STRING_RULES } from './connection-strings.ts'
import { redact } from './redact.ts'

/** secret: grants access and must not ship; test: a test-mode secret; public: published by design. */
export type Exposure = 'secret' | 'test' | 'public'

export interface SecretFinding {
  kind: string
  exposure: Exposure
  severity: Severity
  scriptUrl: string
  /** First characters, "…", last characters. Never the whole value. */
  redacted: string
  offset: number
  line: number
  column: number
  occurrences: number
  note?: string
}

export interface Classified {
  kind: string
  exposure: Exposure
  severity: Severity
  note?: string
}

export interface Rule {
  pattern: RegExp
  classify(value: string, body: string, index: number): Classified | null
  /** false: the rule judges placeholders itself (a PEM block, a JWT, a password in a URL). */
  placeholders?: false
}

/** Not preceded by an identifier character: `sk-` inside `task-list` or `disk-` is not a key. */
const START = '(?<![A-Za-z0-9_$])'

/** Random-looking: upper, lower and digits, and enough distinct characters. Rules out words and padding. */
export function looksRandom(value: string, minDistinct = 12): boolean {
  return /[a-z]/.test(value) && /[A-Z]/.test(value) && /\d/.test(value) && new Set(value).size >= minDistinct
}

function decodeJwtPayload(token: string): Record<string, unknown> | null {
  const part = token.split('.')[1]
  if (!part) return null
  try {
    const b64 = part.replace(/-/g, '+').replace(/_/g, '/')
    const json = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4))
    const payload: unknown = JSON.parse(json)
    return payload && typeof payload === 'object' && !Array.isArray(payload) ? (payload as Record<string, unknown>) : null
  } catch {
    return null
  }
}

const AWS_SECRET_NEARBY = /(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])/g

function awsSecretNearby(body: string, index: number): boolean {
  const window = body.slice(Math.max(0, index - 300), index + 320)
  for (const m of window.matchAll(AWS_SECRET_NEARBY)) {
    if (looksRandom(m[0], 16) && !/EXAMPLE/.test(m[0])) return true
  }
  return false
}

/**
 * Keys printed in providers' own documentation (AWS's AKIAIOSFODNN7EXAMPLE, Stripe's test key of its API
 * reference): copied into code samples everywhere, they grant nothing and are reported as info.
 */
const DOCUMENTED_EXAMPLES = new Set([
  'AKIAIOSFODNN7EXAMPLE',
  'AKIAI44QH8DHBEXAMPLE',
  ['sk', 'test', '4eC39HqLyjWDarjtT1zdp7dc'].join('_'),
  ['sk', 'test', 'BQokikJOvBiI2HlWgH4olfQ2'].join('_'),
])

const documentedExample = (kind: string): Classified => ({
  kind: `${kind}-documentation-example`,
  exposure: 'public',
  severity: 'info',
  note: "a key printed in the provider's documentation: it grants nothing",
})

/**
 * A value that only stands in for a secret: runs of X, x, 0 or *, one character repeated, `<...>`, `your_...`,
 * words like example or placeholder, or too few distinct characters to be random. Read on the part after the
 * provider's prefix (sk_live_XXXXXXXXXXXXXXXXXXXXXXXX is documentation, not a key).
 */
export function isPlaceholderSecret(value: string): boolean {
  if (/[<>{}]|\$\{|%[A-Z_]+%/.test(value)) return true
  if (/your[_-]?|example|placeholder|redacted|dummy|sample|replace[_-]?me|insert[_-]?|(?:x{4}|X{4}|\*{3}|\.{3})/i.test(value)) return true
  const parts = value.split(/[_.-]/).filter((p) => p.length >= 8)
  const body = parts.length > 0 ? parts.reduce((a, b) => (b.length > a.length ? b : a)) : value
  if (/(.)\1{5}/.test(body)) return true
  return new Set(body.toLowerCase()).size < Math.min(8, Math.ceil(body.length / 3))
}

const RULES: Rule[] = [
  {
    placeholders: false,
    // A private key in PEM form, as written in a file or in a string literal with \n escapes.
    pattern:
      /-----BEGIN ((?:RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP )?PRIVATE KEY(?: BLOCK)?)-----(?:\\[rn]|\s){1,4}(?:[A-Za-z-]{1,40}: ?[^\n\\]{0,200}(?:\\[rn]|\s){1,4}){0,4}(?:[A-Za-z0-9+/=]|\\[rn]|\s){64,8000}-----END \1-----/g,
    classify: (v) => {
      const base64 = v.replace(/-----[A-Z ]+-----/g, '').replace(/\\[rn]|\s|[A-Za-z-]+: ?[^\n\\]*/g, '')
      if (base64.length < 64 || !looksRandom(base64, 20)) return null
      const encrypted = v.includes('ENCRYPTED')
      return {
        kind: 'private-key',
        exposure: 'secret',
        severity: encrypted ? 'high' : 'critical',
        ...(encrypted ? { note: 'encrypted with a passphrase' } : {}),
      }
    },
  },
  ...CONNECTION_STRING_RULES,
  {
    pattern: new RegExp(`${START}(?:sk|rk)_(?:live|test)_[0-9a-zA-Z]{24,247}(?![0-9a-zA-Z_])`, 'g'),
    classify: (v) => {
      if (DOCUMENTED_EXAMPLES.has(v)) return documentedExample('stripe-secret-key')
      const restricted = v.startsWith('rk_')
      if (v.includes('_test_')) {
        return { kind: restricted ? 'stripe-test-restricted-key' : 'stripe-test-secret-key', exposure: 'test', severity: 'medium' }
      }
      return { kind: restricted ? 'stripe-restricted-key' : 'stripe-secret-key', exposure: 'secret', severity: 'critical' }
    },
  },
  {
    pattern: new RegExp(`${START}pk_(?:live|test)_[0-9a-zA-Z]{24,247}(?![0-9a-zA-Z_])`, 'g'),
    classify: () => ({ kind: 'stripe-publishable-key', exposure: 'public', severity: 'info' }),
  },
  {
    pattern: /(?<![A-Za-z0-9_$])(?:AKIA|ASIA)[0-9A-Z]{16}(?![0-9A-Za-z_])/g,
    classify: (v, body, index) => {
      if (DOCUMENTED_EXAMPLES.has(v)) return documentedExample('aws-access-key-id')
      if (v.endsWith('EXAMPLE') || new Set(v.slice(4)).size < 6) return null
      return awsSecretNearby(body, index)
        ? { kind: 'aws-access-key', exposure: 'secret', severity: 'critical', note: 'a secret access key appears nearby' }
        : { kind: 'aws-access-key-id', exposure: 'secret', severity: 'high' }
    },
  },
  {
    pattern: new RegExp(`${START}(?:gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9_]{60,240})(?![A-Za-z0-9_])`, 'g'),
    classify: (v) => (looksRandom(v.slice(4), 10) ? { kind: 'github-token', exposure: 'secret', severity: 'critical' } : null),
  },
  {
    pattern: new RegExp(`${START}xox[baprs]-[0-9A-Za-z-]{10,250}(?![0-9A-Za-z-])`, 'g'),
    classify: (v) =>
      v.split('-').length >= 3 && /\d/.test(v) && v.length >= 24 ? { kind: 'slack-token', exposure: 'secret', severity: 'critical' } : null,
  },
  {
    pattern: /https:\/\/hooks\.slack\.com\/services\/T[A-Z0-9]{6,12}\/B[A-Z0-9]{6,12}\/[A-Za-z0-9]{20,32}(?![A-Za-z0-9])/g,
    classify: () => ({ kind: 'slack-webhook-url', exposure: 'secret', severity: 'high' }),
  },
  {
    pattern: new RegExp(`${START}sk-ant-(?:api|admin)\\d{2}-[A-Za-z0-9_-]{80,250}(?![A-Za-z0-9_-])`, 'g'),
    classify: () => ({ kind: 'anthropic-api-key', exposure: 'secret', severity: 'critical' }),
  },
  {
    // Legacy keys are sk- and 32+ alphanumerics; project, service-account and admin keys carry a label.
    pattern: /(?<![A-Za-z0-9_$-])sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,250}|[A-Za-z0-9]{32,250})(?![A-Za-z0-9_-])/g,
    classify: (v) => {
      const body = v.replace(/^sk-(?:proj-|svcacct-|admin-)?/, '')
      return looksRandom(body, 16) ? { kind: 'openai-api-key', exposure: 'secret', severity: 'critical' } : null
    },
  },
  {
    placeholders: false,
    pattern: /(?<![A-Za-z0-9_$-])eyJ[A-Za-z0-9_-]{5,1500}\.eyJ[A-Za-z0-9_-]{5,3000}\.[A-Za-z0-9_-]{16,1500}(?![A-Za-z0-9_-])/g,
    classify: (v) => {
      const payload = decodeJwtPayload(v)
      const role = payload?.role
      if (role === 'service_role' || role === 'supabase_admin') {
        return {
          kind: 'supabase-service-role-key',
          exposure: 'secret',
          severity: 'critical',
          note: `JWT role "${role}" bypasses row level security`,
        }
      }
      if (role === 'anon') {
        return {
          kind: 'supabase-anon-key',
          exposure: 'public',
          severity: 'info',
          note: 'JWT role "anon": public by design, protected by row level security',
        }
      }
      return null
    },
  },
  {
    pattern: new RegExp(`${START}sb_(?:secret|publishable)_[A-Za-z0-9_-]{20,200}(?![A-Za-z0-9_-])`, 'g'),
    classify: (v) =>
      v.startsWith('sb_secret_')
        ? { kind: 'supabase-secret-key', exposure: 'secret', severity: 'critical' }
        : { kind: 'supabase-publishable-key', exposure: 'public', severity: 'info' },
  },
  // Formats of secretlint's recommended preset that ours did not have (same prefixes and lengths), for
  // tokens that do turn up in front-end code: package registries, Git hosts, AI and SaaS APIs.
  {
    pattern: new RegExp(`${START}npm_[A-Za-z0-9]{36}(?![A-Za-z0-9_])`, 'g'),
    classify: (v) => (looksRandom(v.slice(4), 10) ? { kind: 'npm-access-token', exposure: 'secret', severity: 'critical' } : null),
  },
  {
    pattern: new RegExp(`${START}glpat-[A-Za-z0-9_-]{20,128}(?![A-Za-z0-9_-])`, 'g'),
    classify: (v) => (looksRandom(v.slice(6), 10) ? { kind: 'gitlab-token', exposure: 'secret', severity: 'critical' } : null),
  },
  {
    pattern: new RegExp(`${START}SG\\.[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])`, 'g'),
    classify: (v) => (looksRandom(v.slice(3), 16) ? { kind: 'sendgrid-api-key', exposure: 'secret', severity: 'critical' } : null),
  },
  {
    pattern: new RegExp(`${START}hf_[A-Za-z]{34}(?![A-Za-z0-9_])`, 'g'),
    classify: (v) => {
      const body = v.slice(3)
      return /[a-z]/.test(body) && /[A-Z]/.test(body) && new Set(body).size >= 16
        ? { kind: 'huggingface-token', exposure: 'secret', severity: 'high' }
        : null
    },
  },
  {
    pattern: new RegExp(`${START}gsk_[A-Za-z0-9]{52}(?![A-Za-z0-9_])`, 'g'),
    classify: (v) => (looksRandom(v.slice(4), 16) ? { kind: 'groq-api-key', exposure: 'secret', severity: 'critical' } : null),
  },
  {
    pattern: new RegExp(`${START}(?:shppa|shpca|shpat|shpss)_[A-Za-z0-9]{32,64}(?![A-Za-z0-9_])`, 'g'),
    classify: (v) => (new Set(v.slice(6)).size >= 10 ? { kind: 'shopify-token', exposure: 'secret', severity: 'critical' } : null),
  },
  {
    pattern: new RegExp(`${START}lin_api_[A-Za-z0-9_]{32,128}(?![A-Za-z0-9_])`, 'g'),
    classify: (v) => (looksRandom(v.slice(8), 12) ? { kind: 'linear-api-key', exposure: 'secret', severity: 'high' } : null),
  },
  {
    pattern: new RegExp(`${START}ntn_[0-9]{11}[A-Za-z0-9]{35}(?![A-Za-z0-9_])`, 'g'),
    classify: (v) => (looksRandom(v.slice(15), 12) ? { kind: 'notion-token', exposure: 'secret', severity: 'high' } : null),
  },
  {
    pattern: new RegExp(`${START}tskey-[a-z]{2,20}-[0-9A-Za-z_]{8,40}-[0-9A-Za-z_]{16,60}(?![0-9A-Za-z_])`, 'g'),
    classify: () => ({ kind: 'tailscale-key', exposure: 'secret', severity: 'critical' }),
  },
  {
    pattern: new RegExp(`${START}figd_[A-Za-z0-9_-]{40,200}(?![A-Za-z0-9_-])`, 'g'),
    classify: (v) => (looksRandom(v.slice(5), 12) ? { kind: 'figma-token', exposure: 'secret', severity: 'high' } : null),
  },
  {
    pattern: new RegExp(`${START}(?:cfk|cfut|cfat)_[A-Za-z0-9]{40}[0-9a-f]{8}(?![A-Za-z0-9_])`, 'g'),
    classify: () => ({ kind: 'cloudflare-token', exposure: 'secret', severity: 'critical' }),
  },
  {
    pattern: /(?<![A-Za-z0-9_$-])AIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])/g,
    classify: () => ({
      kind: 'firebase-api-key',
      exposure: 'public',
      severity: 'info',
      note: 'Google/Firebase web API key: public by design; restrict it by HTTP referrer and API',
    }),
  },
]

function lineAndColumn(body: string, offset: number): { line: number; column: number } {
  let line = 1
  let lineStart = 0
  for (let i = body.indexOf('\n'); i !== -1 && i < offset; i = body.indexOf('\n', i + 1)) {
    line++
    lineStart = i + 1
  }
  return { line, column: offset - lineStart + 1 }
}

/** Scans every script; the same value found twice is one finding with its first location and a count. */
export function scanScripts(scripts: readonly ScriptArtifact[]): SecretFinding[] {
  const byValue = new Map<string, SecretFinding>()
  const rejected = new Set<string>()
  for (const script of scripts) {
    const body = script.body
    for (const rule of RULES) {
      for (const m of body.matchAll(rule.pattern)) {
        const value = m[0]
        const seen = byValue.get(value)
        if (seen) {
          seen.occurrences++
          continue
        }
        if (rejected.has(value)) continue
        const judged = DOCUMENTED_EXAMPLES.has(value) || rule.placeholders === false || !isPlaceholderSecret(value)
        const classified = judged ? rule.classify(value, body, m.index) : null
        if (!classified) {
          rejected.add(value)
          continue
        }
        byValue.set(value, {
          ...classified,
          scriptUrl: script.url,
          redacted: redact(value),
          offset: m.index,
          ...lineAndColumn(body, m.index),
          occurrences: 1,
        })
      }
    }
  }
  return [...byValue.values()]
}

/**
 * The outcome for findings already sorted by severity: fail on a secret, warn on a test-mode key, info when
 * only public-by-design keys were found, pass otherwise. `where` names the place ("in JavaScript", "in the
 * page's HTML"); `locate` says where one finding is.
 */
export function secretsOutcome(
  findings: readonly SecretFinding[],
  evidence: Record<string, unknown>,
  where: string,
  locate: (f: SecretFinding) => string,
  passSummary: string,
): CheckOutcome {
  const secrets = findings.filter((f) => f.exposure === 'secret')
  if (secrets.length > 0) {
    const worst = secrets[0]!
    return {
      status: 'fail',
      severity: worst.severity,
      evidence,
      summary: `${secrets.length} secret(s) ${where}, e.g. ${worst.kind} ${worst.redacted} ${locate(worst)}.`,
    }
  }
  const tests = findings.filter((f) => f.exposure === 'test')
  if (tests.length > 0)
    return {
      status: 'warn',
      severity: 'medium',
      evidence,
      summary: `${tests.length} test-mode secret key(s) ${where}, e.g. ${tests[0]!.redacted}.`,
    }
  if (findings.length > 0) {
    const kinds = [...new Set(findings.map((f) => f.kind))]
    return { status: 'info', severity: 'info', evidence, summary: `Only keys that are public by design ${where}: ${kinds.join(', ')}.` }
  }
  return { status: 'pass', evidence, summary: passSummary }
}
