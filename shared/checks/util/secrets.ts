// Provider-specific secret patterns for JavaScript bundles. Every pattern starts with a literal prefix,
// refuses to start inside an identifier, and has bounded repeats, so a scan stays linear on megabytes of
// minified code. Values never leave this module unredacted.

import type { ScriptArtifact, Severity } from '../types.ts'
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

interface Classified {
  kind: string
  exposure: Exposure
  severity: Severity
  note?: string
}

interface Rule {
  pattern: RegExp
  classify(value: string, body: string, index: number): Classified | null
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

const RULES: Rule[] = [
  {
    pattern: new RegExp(`${START}(?:sk|rk)_(?:live|test)_[0-9a-zA-Z]{24,247}(?![0-9a-zA-Z_])`, 'g'),
    classify: (v) => {
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
        const classified = rule.classify(value, body, m.index)
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
