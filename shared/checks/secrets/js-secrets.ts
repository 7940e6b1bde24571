// Provider-specific secrets in the JavaScript the page loaded. Keys that are public by design are
// reported as info, never as failures.

import { defineCheck } from '../types.ts'
import { scanScripts, secretsOutcome, type SecretFinding } from '../util/secrets.ts'
import { bySeverity } from '../../report/ranking.ts'

const MAX_FINDINGS = 20

export const jsSecrets = defineCheck({
  id: 'js-secrets',
  category: 'secrets',
  title: 'No secret keys in JavaScript',
  failTitle: 'Secret keys in JavaScript',
  description:
    'Scans the external and inline scripts the page loaded for provider-specific secret formats (Stripe, AWS, GitHub, GitLab, npm, ' +
    'Slack, OpenAI, Anthropic, Groq, Hugging Face, SendGrid, Shopify, Linear, Notion, Tailscale, Figma, Cloudflare and Supabase keys), ' +
    'private keys in PEM form, and connection strings or URLs with a password.',
  why:
    'Everything shipped to the browser is public. A secret key in a bundle lets anyone charge cards, read databases past their access ' +
    'rules, or use paid APIs on your account.',
  confirmation:
    'Fails for secret formats: Stripe sk_live_/rk_live_, AWS access key ids (critical when a secret access key appears nearby), ' +
    'GitHub ghp_/gho_/ghu_/ghs_/ghr_/github_pat_, Slack xox*- tokens and webhook URLs, OpenAI sk-/sk-proj- and Anthropic sk-ant- ' +
    'keys, Supabase sb_secret_ keys and JWTs whose decoded payload has role "service_role", the formats of secretlint\u2019s recommended ' +
    'preset for npm_, glpat-, SG., hf_, gsk_, shpat_, lin_api_, ntn_, tskey-, figd_ and cfut_ tokens, PEM private key blocks (critical; ' +
    'high when encrypted), and connection strings with a password (critical for databases and brokers: postgres, mysql, ' +
    'mongodb+srv, redis with or without a user, amqp, mssql; a password in the query as JDBC writes it; ADO.NET and ODBC ' +
    'Server=...;Password=... strings), or http/ftp URLs with one (high), whose password is not a placeholder (password, changeme, ' +
    '${VAR}) and whose host is not an example host. Placeholders in any format are never findings: the part after the provider ' +
    'prefix made of X, x, 0 or one repeated character, <...>, your_..., example or too few distinct characters to be random ' +
    '(sk_live_XXXXXXXXXXXXXXXXXXXXXXXX). Warns for Stripe test-mode secret keys. Keys printed in providers\u2019 documentation ' +
    '(AKIAIOSFODNN7EXAMPLE, Stripe\u2019s API-reference test key) are info. ' +
    'Public by design, reported as info only: Supabase anon JWTs and sb_publishable_ keys, Firebase/Google AIza web keys, Stripe ' +
    'pk_live_/pk_test_. Matches must stand alone (not inside a longer identifier) and look random, so class names and minified ' +
    'identifiers containing "sk-" are not findings. Evidence shows the kind, script URL, ' +
    'position and a redacted value (first 8 and last 4 characters).',
  severity: 'critical',
  fix: {
    generic:
      'Revoke and rotate the exposed key now, then move the call that needs it to a server route or function so the key stays in ' +
      'server-side environment variables.',
    vercel:
      'Rotate the key, set it as a server-only Environment Variable (no NEXT_PUBLIC_/VITE_ prefix) and call the provider from an API ' +
      'route or Vercel Function.',
    netlify:
      'Rotate the key, set it in Site configuration > Environment variables (scoped to Functions) and call the provider from a Netlify ' +
      'Function.',
    nextjs:
      'Rotate the key; read it only in server code (route handlers, server actions) from process.env.SECRET_NAME without the ' +
      "NEXT_PUBLIC_ prefix, and add import 'server-only' to modules that use it.",
    nginx:
      'Rotate the key and remove it from the built assets; keep it on the server and proxy the calls, e.g. location /api/ { proxy_pass ' +
      'http://backend; } with the backend adding the credential.',
    cloudflare:
      'Rotate the key, store it as a Worker secret (wrangler secret put NAME) and call the provider from the Worker instead of the ' +
      'browser.',
  },
  fixTarget: { kind: 'secrets' },
  requires: ['scripts'],
  run: ({ scripts }) => {
    const findings = scanScripts(scripts)
    const bytes = scripts.reduce((n, s) => n + s.body.length, 0)
    findings.sort(bySeverity)
    const evidence = {
      scripts: scripts.length,
      bytes,
      total: findings.length,
      findings: findings.slice(0, MAX_FINDINGS).map(toEvidence),
      truncated: findings.length > MAX_FINDINGS,
    }
    return secretsOutcome(findings, evidence, 'in JavaScript', (f) => `in ${f.scriptUrl}`, `No secret keys in ${scripts.length} script(s).`)
  },
})

function toEvidence(f: SecretFinding) {
  return {
    kind: f.kind,
    severity: f.severity,
    public: f.exposure === 'public',
    script: f.scriptUrl,
    value: f.redacted,
    line: f.line,
    column: f.column,
    offset: f.offset,
    occurrences: f.occurrences,
    ...(f.note ? { note: f.note } : {}),
  }
}
