import { Type } from '@sinclair/typebox'
import { getCheck } from '../../../shared/checks/registry.ts'
import { detectFromSignals, signalsFromReport, type Platform, type PlatformDetection } from '../../../shared/platform.ts'
import type { Report, ReportCheck } from '../../../shared/report-schema.ts'
import { penaltyOf } from '../../../shared/scoring.ts'
import { unknownCheck } from './explain_check.ts'
import { byImpact, completedScan } from './get_findings.ts'
import { defineTool, readOnly } from './types.ts'
import { Id, strict } from './schemas.ts'

/** What kind of change a check's fix is: it decides where the change goes and how to verify it. */
type FixKind = 'headers' | 'https-redirect' | 'cookies' | 'mixed-content' | 'version' | 'served-file' | 'secrets' | 'other'

const KIND: Record<string, FixKind> = {
  hsts: 'headers',
  csp: 'headers',
  'frame-protection': 'headers',
  'x-content-type-options': 'headers',
  'referrer-policy': 'headers',
  'permissions-policy': 'headers',
  'https-redirect': 'https-redirect',
  'cookie-secure': 'cookies',
  'cookie-httponly': 'cookies',
  'cookie-samesite': 'cookies',
  'mixed-content': 'mixed-content',
  'version-disclosure': 'version',
  'exposed-env-file': 'served-file',
  'exposed-git-config': 'served-file',
  'exposed-source-maps': 'served-file',
  'exposed-package-manifest': 'served-file',
  'exposed-agent-instructions': 'served-file',
  'exposed-framework-config': 'served-file',
  'js-secrets': 'secrets',
}

/** The response headers a header fix must make appear. */
const HEADERS: Record<string, string[]> = {
  hsts: ['strict-transport-security'],
  csp: ['content-security-policy'],
  'frame-protection': ['content-security-policy', 'x-frame-options'],
  'x-content-type-options': ['x-content-type-options'],
  'referrer-policy': ['referrer-policy'],
  'permissions-policy': ['permissions-policy'],
}

const WHERE: Record<FixKind, Record<Platform, string>> = {
  headers: {
    vercel: 'vercel.json at the project root ("headers" for source "/(.*)")',
    netlify: '_headers in the publish directory (e.g. public/_headers), or [[headers]] in netlify.toml',
    nextjs: 'next.config.js (or next.config.mjs / next.config.ts): async headers() for source "/:path*"',
    nginx: 'the nginx server block of the site (e.g. /etc/nginx/sites-available/<site>), with "always" so error pages get it too',
    cloudflare: 'Cloudflare dashboard: Rules > Transform Rules > Modify Response Header (a rule for all incoming requests)',
    generic: 'the web server, proxy or framework config that sets response headers for every path',
  },
  'https-redirect': {
    vercel: 'Vercel dashboard: Project > Settings > Domains (the domain must be served by Vercel, not only proxied)',
    netlify: 'Netlify dashboard: Domain management > HTTPS (certificate, then Force HTTPS)',
    nextjs: 'the host or proxy in front of Next.js; behind a proxy, middleware.ts',
    nginx: 'the nginx server block that listens on port 80',
    cloudflare: 'Cloudflare dashboard: SSL/TLS > Edge Certificates > Always Use HTTPS',
    generic: 'the web server or load balancer answering on port 80',
  },
  cookies: {
    vercel: 'the code that sets the cookie (API route or Vercel Function)',
    netlify: 'the code that sets the cookie (Netlify Function)',
    nextjs: 'the route handler, server action or middleware that calls cookies().set',
    nginx: 'the app that sets the cookie; as a stop-gap, proxy_cookie_flags in the nginx server or location block that proxies it',
    cloudflare: 'the application that sets the cookie; as a stop-gap, a Cloudflare Worker rewriting Set-Cookie',
    generic: 'the server code that sends the Set-Cookie header (session or auth middleware)',
  },
  'mixed-content': {
    vercel: 'the page source and config holding http:// URLs, then vercel.json ("headers") as a safety net',
    netlify: 'the page source and config holding http:// URLs, then _headers as a safety net',
    nextjs: 'components and environment variables holding http:// URLs, then headers() in next.config.js as a safety net',
    nginx: 'the app\'s http:// URLs, then the nginx server block as a safety net',
    cloudflare: 'Cloudflare dashboard: SSL/TLS > Edge Certificates > Automatic HTTPS Rewrites, and the http:// URLs in the app',
    generic: 'every http:// resource URL in the page source, templates and configuration',
  },
  version: {
    vercel: 'the framework or app that sends X-Powered-By (next.config.js poweredByHeader, or the app\'s own server code)',
    netlify: 'the functions or framework that send X-Powered-By (Netlify cannot remove headers from _headers)',
    nextjs: 'next.config.js (poweredByHeader: false)',
    nginx: 'the nginx http block (nginx.conf: server_tokens off, proxy_hide_header) and the upstream app or CMS',
    cloudflare: 'Cloudflare dashboard: Rules > Transform Rules > Modify Response Header (remove the headers)',
    generic: 'the web server and app config that send Server, X-Powered-By and the generator meta tag',
  },
  'served-file': {
    vercel: 'the deployment contents: .gitignore / .vercelignore and any build step that copies the file into the output; secrets in Project Settings > Environment Variables',
    netlify: 'the publish directory (it must be the build output) and netlify.toml ([[redirects]] returning 404 until redeployed)',
    nextjs: 'the public/ directory (and out/ for a static export): Next.js serves everything in it as is',
    nginx: 'the nginx server block (a location that denies the path, e.g. location ~ /\\.(?!well-known) { deny all; }) and the served root directory',
    cloudflare: 'Cloudflare dashboard: Security > WAF > Custom rules (block the path), then the files at the origin',
    generic: 'the deployed web root (remove the file) and the web server config (deny the path)',
  },
  secrets: {
    vercel: 'the client-side code that embeds the key; move it to Project Settings > Environment Variables (no NEXT_PUBLIC_/VITE_ prefix) and an API route or Vercel Function',
    netlify: 'the client-side code that embeds the key; move it to Site configuration > Environment variables (Functions scope) and a Netlify Function',
    nextjs: 'the client component or NEXT_PUBLIC_ variable that puts the key in the bundle; move the call to a route handler or server action',
    nginx: 'the built JavaScript that embeds the key; move the call to a backend route that nginx proxies',
    cloudflare: 'the client-side code that embeds the key; move the call to a Cloudflare Worker holding it as a secret (wrangler secret put)',
    generic: 'the client-side code that embeds the key, and a server-side route that holds it instead',
  },
  other: {
    vercel: 'vercel.json or the project\'s code',
    netlify: 'netlify.toml, _headers or the project\'s code',
    nextjs: 'next.config.js or the app\'s code',
    nginx: 'the nginx server block or the app behind it',
    cloudflare: 'the Cloudflare dashboard or the origin app',
    generic: 'the app or web server configuration',
  },
}

/** Places that differ from the check's kind on one platform. */
const WHERE_OVERRIDE: Record<string, Partial<Record<Platform, string>>> = {
  hsts: { cloudflare: 'Cloudflare dashboard: SSL/TLS > Edge Certificates > HTTP Strict Transport Security (HSTS)' },
  'exposed-git-config': { vercel: 'the build step that copies .git into the output directory (Vercel itself never uploads .git)' },
  'exposed-env-file': { nextjs: 'the public/ directory: move .env* files to the project root, which Next.js does not serve' },
}

/** The exposed file's URL from the evidence (url, or path on the origin), else the path the check probes. */
function servedUrl(check: ReportCheck, origin: string): string | null {
  const e = check.evidence
  if (typeof e.url === 'string' && /^https?:\/\//.test(e.url)) return e.url
  if (typeof e.path === 'string' && e.path.startsWith('/')) return `${origin}${e.path}`
  const known: Record<string, string> = { 'exposed-env-file': '/.env', 'exposed-git-config': '/.git/config' }
  return known[check.id] ? `${origin}${known[check.id]}` : null
}

const sh = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`

function verification(check: ReportCheck, kind: FixKind, report: Report, scanUrl: string): string {
  const finalUrl = report.finalUrl || scanUrl
  const target = new URL(finalUrl)
  const rescan = `Then re-run scan_app with {"url": ${JSON.stringify(scanUrl)}} and check that ${check.id} passes.`
  switch (kind) {
    case 'headers': {
      const names = HEADERS[check.id] ?? []
      return `curl -sI ${sh(finalUrl)} | grep -iE ${sh(`^(${names.join('|')}):`)} must print ${names.join(' and ')} with the new value. ${rescan}`
    }
    case 'https-redirect': {
      const start = typeof check.evidence.startUrl === 'string' ? check.evidence.startUrl : `http://${target.hostname}/`
      return `curl -sI ${sh(start)} must answer 301 or 308 with a location on https://${target.hostname}/. ${rescan}`
    }
    case 'cookies': {
      const attribute = check.id === 'cookie-secure' ? 'Secure' : check.id === 'cookie-httponly' ? 'HttpOnly' : 'SameSite=Lax (or Strict)'
      return `curl -sI ${sh(finalUrl)} | grep -i '^set-cookie:' must show ${attribute} on every cookie named in the evidence (sign in first if the cookie is set after login). ${rescan}`
    }
    case 'mixed-content':
      return `Load ${finalUrl} in a browser: the console must show no "Mixed Content" messages. ${rescan}`
    case 'version':
      return `curl -sI ${sh(finalUrl)} | grep -iE '^(server|x-powered-by|x-aspnet-version|x-aspnetmvc-version|x-generator):' must show no version numbers, and the page no versioned <meta name="generator">. ${rescan}`
    case 'served-file': {
      const url = servedUrl(check, target.origin)
      const probe = url
        ? `curl -s -o /dev/null -w '%{http_code}\\n' ${sh(url)} must print 404 or 403 (an HTML page that answers every path also passes)`
        : 'Each file named in the evidence must answer 404 or 403'
      return `${probe}; rotate any secret the file held. ${rescan}`
    }
    case 'secrets':
      return `The old key must be revoked at its provider (a call with it must fail), and the new key must not appear in any script the page loads. ${rescan}`
    default:
      return rescan.replace(/^Then r/, 'R')
  }
}

function brief(check: ReportCheck, platform: Platform, report: Report, scanUrl: string) {
  const meta = getCheck(check.id)
  const kind = KIND[check.id] ?? 'other'
  const platformFix = meta?.fix[platform]
  return {
    checkId: check.id,
    title: check.title,
    severity: check.severity,
    status: check.status,
    impact: penaltyOf(check),
    problem: check.summary,
    evidence: check.evidence,
    change: platformFix ?? meta?.fix.generic ?? check.advice ?? check.summary,
    // False when the check has no fix written for this platform and the generic one stands in.
    platformSpecific: platform === 'generic' || platformFix !== undefined,
    where: WHERE_OVERRIDE[check.id]?.[platform] ?? WHERE[kind][platform],
    verify: verification(check, kind, report, scanUrl),
  }
}

const PLATFORM_ARG = Type.Union((['vercel', 'netlify', 'nextjs', 'nginx', 'cloudflare', 'generic'] as const).map((s) => Type.Literal(s)), {
  description: 'Write the brief for this platform instead of the detected one.',
})

export const getFixBrief = defineTool({
  name: 'get_fix_brief',
  description:
    'What a coding agent must change, and where, to fix each failing or warning check of a completed scan, highest impact first, ' +
    'for the hosting platform detected from the scanned responses (Vercel, Netlify, Next.js, nginx, Cloudflare; generic when none is recognised) ' +
    'or the one given as platform. Each item: checkId, problem (what this scan found) and evidence, change (the fix, with snippets), ' +
    'where (the file or setting to edit: vercel.json, netlify.toml or _headers, next.config.js, the nginx server block, Cloudflare Transform Rules...) ' +
    'and verify (how to confirm: curl -I, then scan_app again).',
  plan: 'free',
  annotations: readOnly('Get a fix brief'),
  input: Type.Object(
    {
      scanId: Id('scan', 'scn'),
      checkId: Type.Optional(Type.String({ minLength: 1, maxLength: 80, description: 'Only this check.' })),
      platform: Type.Optional(PLATFORM_ARG),
    },
    strict,
  ),
  run: async (input, ctx) => {
    const { scan, report } = await completedScan(ctx, input.scanId)
    const recorded = scan.platformSignals
    const detection: PlatformDetection & { source: string } = {
      ...detectFromSignals(recorded ?? signalsFromReport(report)),
      source: recorded ? 'the scanned response\'s headers and page' : 'the report\'s evidence (Server, X-Powered-By, script URLs)',
    }
    const platform = input.platform ?? detection.platform

    if (input.checkId !== undefined && !report.checks.some((c) => c.id === input.checkId) && !getCheck(input.checkId)) {
      throw unknownCheck(input.checkId)
    }
    const findings = byImpact(report).filter(
      (c) => (c.status === 'fail' || c.status === 'warn') && (input.checkId === undefined || c.id === input.checkId),
    )
    const only = input.checkId === undefined ? undefined : report.checks.find((c) => c.id === input.checkId)
    const note =
      input.checkId === undefined
        ? findings.length === 0 ? 'No failing or warning checks in this scan: nothing to fix.' : undefined
        : !only
          ? `${input.checkId} was not part of this scan (checks version ${report.checksVersion}): scan again to run it.`
          : findings.length === 0 ? `${input.checkId} is ${only.status} in this scan: nothing to fix.` : undefined

    return {
      scanId: scan.id,
      url: report.url,
      finalUrl: report.finalUrl,
      score: report.score,
      grade: report.grade,
      platform,
      detectedFrom: input.platform !== undefined ? ['platform argument'] : detection.detectedFrom,
      detected: detection,
      ...(note ? { note } : {}),
      items: findings.map((c) => brief(c, platform, report, scan.url)),
    }
  },
})
