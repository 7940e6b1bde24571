// The answers the page's own API calls got, judged as they came (no request of ours): personal data and
// credentials in answers to anonymous requests, and secrets. The page's traffic is the API's map.

import { type ApiCall, type ApiTraffic, type CheckOutcome, defineCheck, type Severity } from '../types.ts'
import { registrableDomain } from '../util/domains.ts'
import { startTags } from '../util/html.ts'
import { hostOf } from '../util/http.ts'
import { countInText, countPersonalData, parseJson, type PersonalDataCounts } from '../util/personal-data.ts'
import { sharedCacheability } from '../util/shared-cache.ts'
import { scanScripts } from '../util/secrets.ts'

const MAX_LISTED = 5
const LABELS: Record<string, string> = {
  emails: 'e-mail addresses',
  passwordHashes: 'password hashes',
  passwordFields: 'password fields',
  phones: 'phone numbers',
  tokens: 'tokens',
}

interface Exposed {
  url: string
  status: number
  counts: Partial<PersonalDataCounts>
  secrets: string[]
  severity: Severity
}

const nonZero = (c: PersonalDataCounts): Partial<PersonalDataCounts> =>
  Object.fromEntries(Object.entries(c).filter(([k, v]) => v > 0 && k !== 'records')) as Partial<PersonalDataCounts>

/** How bad one answer is: credentials are critical, a list of people high, one address or number not a finding. */
function severityOf(c: PersonalDataCounts, secrets: number): Severity | null {
  if (c.passwordHashes > 0 || c.passwordFields > 0 || c.tokens > 0 || secrets > 0) return 'critical'
  if (c.emails >= 2 || c.phones >= 2) return 'high'
  return null
}

const isJson = (call: ApiCall) => /json|graphql/i.test(call.headers['content-type'] ?? '') || parseJson(call.body) !== undefined

function judge(call: ApiCall): Exposed | null {
  const parsed = parseJson(call.body)
  const counts = parsed !== undefined ? countPersonalData(parsed) : countInText(call.body)
  const secrets = scanScripts([{ url: call.url, inline: false, body: call.body }]).filter((f) => f.exposure === 'secret')
  const severity = severityOf(counts, secrets.length)
  if (!severity) return null
  return { url: call.url, status: call.status, counts: nonZero(counts), secrets: [...new Set(secrets.map((s) => s.kind))], severity }
}

/** The map of the API as the page used it: counts and hosts, small. */
export function trafficSummary(api: ApiTraffic, pageUrl: string, html: string): Record<string, unknown> {
  const site = registrableDomain(hostOf(pageUrl) ?? '')
  const methods: Record<string, number> = {}
  const contentTypes: Record<string, number> = {}
  const hosts = new Set<string>()
  for (const c of api.calls) {
    methods[c.method] = (methods[c.method] ?? 0) + 1
    const type = (c.headers['content-type'] ?? '').split(';', 1)[0]!.trim().toLowerCase() || 'none'
    if (type in contentTypes || Object.keys(contentTypes).length < MAX_LISTED) contentTypes[type] = (contentTypes[type] ?? 0) + 1
    const host = hostOf(c.url)
    if (host && registrableDomain(host) === site) hosts.add(host)
  }
  return {
    calls: api.calls.length + api.unlisted,
    methods,
    contentTypes,
    sameSiteHosts: [...hosts].slice(0, MAX_LISTED),
    graphql: api.calls.filter((c) => c.graphql).length,
    credentialed: api.calls.filter((c) => c.credentialed).length,
    websockets: api.websockets.length,
    forms: startTags(html, ['form']).length,
  }
}

/** Answers to credentialed calls a shared cache may store: explicitly allowed first. */
function cachedAnswers(calls: readonly ApiCall[]) {
  return calls
    .filter((c) => c.credentialed && c.status >= 200 && c.status < 300)
    .map((c) => ({ url: c.url, cacheControl: c.headers['cache-control'] ?? null, how: sharedCacheability(c) }))
    .filter((c) => c.how !== 'no')
    .sort((a, b) => Number(b.how === 'allowed') - Number(a.how === 'allowed'))
}

export const apiDataExposure = defineCheck({
  id: 'api-data-exposure',
  category: 'exposure',
  title: "The page's API answers expose no personal data, credentials or cacheable signed-in data",
  failTitle: "The page's API answers expose personal data, credentials or cacheable signed-in data",
  description:
    'Reads the answers the page itself got from its fetch/XHR calls while it loaded (no request of ours) and counts, in answers ' +
    'to anonymous requests, e-mail addresses, password hashes and password fields, phone numbers, tokens and secrets; and reads ' +
    'whether answers to calls sent with a Cookie or Authorization header may be stored by shared caches.',
  why:
    'An endpoint that the page fetches anonymously is public: anyone can call it. One that returns users with their e-mail ' +
    'addresses and password hashes hands out the user table, and hashes of weak passwords are cracked offline in minutes.',
  confirmation:
    'Only successful (2xx) JSON answers to anonymous requests are judged: in a scan every call (a session cookie or token ' +
    'the site handed an anonymous visitor does not make it signed in); in a signed-in audit, calls without a Cookie or ' +
    'Authorization header. Evidence gives counts, ' +
    'never the values. Fails (critical) on password hashes (bcrypt, argon2, scrypt, PBKDF2, SHA-crypt), non-empty password ' +
    'fields, random-looking values under token, secret or API-key keys (not CSRF tokens, pagination cursors or nonces), or ' +
    'secrets the secret scanner recognises; fails (high) on two or more distinct e-mail addresses or phone numbers (a list of ' +
    'people). Not findings: one e-mail address or phone number (a contact), answers to credentialed requests of a signed-in ' +
    "visit (the user's own data), error answers. When none of that is found: fails (medium) when an answer to a call sent " +
    'with a Cookie or Authorization header says "public" or "s-maxage" above 0 without "private" or "no-store" (every shared ' +
    'cache may store it and hand it to the next visitor, RFC 9111); warns (low) when such an answer to a cookie call has ' +
    'max-age above 0 without them (an Authorization call without "public" or s-maxage is not stored by shared caches). ' +
    "Bounded: the page's first 20 calls, 64 KB of each answer.",
  severity: 'high',
  fix: {
    generic:
      'Decide per endpoint who may call it and what it returns: require a session for user data, select only the fields the page ' +
      "shows (never password hashes, tokens or other users' e-mail addresses), and serialise through an explicit allow-list " +
      '(a DTO) rather than the database row. Send "Cache-Control: private, no-store" on every answer that depends on who is ' +
      'signed in.',
    express:
      "Return an explicit shape and require a session:\napp.get('/api/users', requireAuth, async (req, res) => {\n  const users = await db.users.findMany({ select: { id: true, name: true } })\n  res.json(users)\n})",
    nextjs:
      'In the route handler, check the session (getServerSession/auth()) and return only the fields the page needs: ' +
      'prisma.user.findMany({ select: { id: true, name: true } }).',
    vercel:
      'In the serverless function (api/*.ts), return 401 without a session and select only public fields; never return the ' +
      'ORM row as it is.',
    netlify:
      'In the Function (netlify/functions/*), check the session or JWT before answering and return an explicit object with ' +
      'public fields only.',
    nginx:
      'The fix belongs in the application behind nginx. Meanwhile, refuse the endpoint to anonymous callers: location = ' +
      '/api/users { if ($http_authorization = "") { return 401; } proxy_pass http://app; }',
    cloudflare:
      'Fix the origin. Meanwhile, a WAF custom rule can block the endpoint for requests without a session cookie: (http.request.uri.path eq "/api/users" and not http.cookie contains "session=") -> Block.',
    django: 'Use a serializer with an explicit fields list (never "__all__") and permission_classes = [IsAuthenticated] on the view.',
    rails:
      'Render with an explicit serializer or `render json: @users.as_json(only: [:id, :name])`, behind before_action :authenticate_user!.',
  },
  requires: ['page'],
  run: ({ page }): CheckOutcome => {
    const api = page.api
    if (!api) return { status: 'skipped', evidence: {}, summary: "Not applicable: the page's API traffic was not recorded." }
    const traffic = trafficSummary(api, page.finalUrl, page.html)
    // Anonymous: every call of a visit that did not sign in (a cookie or token it carries was handed to an
    // anonymous visitor); on a signed-in visit, only the calls that carried no credentials.
    const anonymous = (c: ApiCall) => !api.signedIn || !c.credentialed
    const judged = api.calls.filter((c) => c.status >= 200 && c.status < 300 && anonymous(c) && c.body && isJson(c))
    const exposed = judged.map(judge).filter((e): e is Exposed => e !== null)
    const evidence: Record<string, unknown> = { traffic, anonymousJsonAnswers: judged.length }
    const cached = cachedAnswers(api.calls)
    if (cached.length) evidence.cacheable = cached.slice(0, MAX_LISTED).map(({ how: _, ...c }) => c)
    if (exposed.length === 0) {
      if (cached.length === 0) {
        return {
          status: 'pass',
          evidence,
          summary: api.calls.length ? `No personal data in ${judged.length} API answer(s).` : 'No API calls.',
        }
      }
      const first = cached[0]!
      const summary = `${first.url} answers a credentialed call with Cache-Control "${first.cacheControl ?? ''}": shared caches may store it.`
      return first.how === 'allowed'
        ? { status: 'fail', severity: 'medium', evidence, summary }
        : { status: 'warn', severity: 'low', evidence, summary }
    }
    exposed.sort((a, b) => Number(b.severity === 'critical') - Number(a.severity === 'critical'))
    evidence.exposed = exposed.slice(0, MAX_LISTED).map(({ severity: _, ...e }) => e)
    const worst = exposed[0]!
    const what = Object.entries(worst.counts)
      .map(([k, v]) => `${v} ${LABELS[k] ?? k}`)
      .concat(worst.secrets)
      .join(', ')
    return {
      status: 'fail',
      severity: worst.severity,
      evidence,
      summary: `${worst.url} answers an anonymous request with ${what}${exposed.length > 1 ? ` (and ${exposed.length - 1} other API answer(s))` : ''}.`,
    }
  },
})
