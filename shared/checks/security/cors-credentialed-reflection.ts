// CORS that hands an unrelated site the page's response, with the visitor's cookies (Fetch §3.2 CORS check).

import { type ApiProbe, type CheckOutcome, type CorsProbeArtifact, defineCheck } from '../types.ts'
import { headerValue } from '../util/http.ts'

const ALLOW_LIST_EXAMPLE = 'https://app.example.com'

export const corsCredentialedReflection = defineCheck({
  id: 'cors-credentialed-reflection',
  category: 'security',
  title: 'CORS does not let other sites read responses with credentials',
  failTitle: 'CORS lets other sites read responses with credentials',
  description:
    'Sends a GET of the final URL with "Origin: https://appaudit-cors-probe.example", a site the target has never heard of, and reads' +
    ' Access-Control-Allow-Origin and Access-Control-Allow-Credentials in the answer; then the same, with that Origin and with ' +
    '"Origin: null", on up to 4 same-site API paths the page called while it loaded (GET where the page used GET, an OPTIONS ' +
    'preflight where it used another method).',
  why:
    'A server that copies any Origin into Access-Control-Allow-Origin and adds Access-Control-Allow-Credentials: true lets every ' +
    "website a signed-in visitor opens read that visitor's pages and API answers with their cookies: account data, CSRF tokens, API " +
    'keys.',
  confirmation:
    'Fails (critical) when the answer allows the unrelated probe origin, or the origin "null" (which any site can send from a ' +
    'sandboxed iframe), together with exactly "Access-Control-Allow-Credentials: true". Warns (medium) when the probe origin is ' +
    'reflected without credentials: other sites can read what an anonymous visitor sees, and one setting away from the critical case;' +
    ' warns (low) for "null" without credentials. Not findings: "*" with or without credentials (browsers refuse "*" on credentialed ' +
    "requests, so it only shares what anyone can fetch), a fixed origin that is not the probe's, no CORS headers at all, an " +
    'Access-Control-Allow-Credentials value other than exactly "true" (browsers ignore it), and a list of several origins (browsers ' +
    'reject it; reported as a note). Skipped when the probe could not be made. API paths are only those the page itself called: ' +
    'evidence lists how many were probed and, for up to 5 answers that allow an unrelated origin, the URL, the Origin sent and ' +
    'whether credentials are allowed.',
  severity: 'critical',
  fix: {
    generic:
      `Never copy the request's Origin into Access-Control-Allow-Origin. Compare it with a fixed allow-list of your own front-ends and ` +
      `only then echo it, with "Vary: Origin"; send Access-Control-Allow-Credentials: true only for those origins, and never allow ` +
      `"null". Public, cookie-less resources can use "Access-Control-Allow-Origin: *" without credentials.`,
    vercel: `Remove a reflecting CORS middleware (cors({ origin: true, credentials: true })) and check the origin in the function:\nconst ALLOWED = new Set(['${ALLOW_LIST_EXAMPLE}'])\nconst origin = req.headers.origin\nif (origin && ALLOWED.has(origin)) {\n  res.setHeader('Access-Control-Allow-Origin', origin)\n  res.setHeader('Access-Control-Allow-Credentials', 'true')\n}\nres.setHeader('Vary', 'Origin')\nFor one fixed origin, vercel.json headers work too: { "key": "Access-Control-Allow-Origin", "value": "${ALLOW_LIST_EXAMPLE}" }.`,
    netlify: `In public/_headers, send a fixed origin instead of a reflected one:\n/api/*\n  Access-Control-Allow-Origin: ${ALLOW_LIST_EXAMPLE}\n  Access-Control-Allow-Credentials: true\n  Vary: Origin\nIn Netlify Functions, check event.headers.origin against an allow-list before echoing it.`,
    nextjs: `In middleware.ts:\nimport { NextResponse, type NextRequest } from 'next/server'\nconst ALLOWED = new Set(['${ALLOW_LIST_EXAMPLE}'])\nexport function middleware(req: NextRequest) {\n  const res = NextResponse.next()\n  const origin = req.headers.get('origin')\n  if (origin && ALLOWED.has(origin)) {\n    res.headers.set('Access-Control-Allow-Origin', origin)\n    res.headers.set('Access-Control-Allow-Credentials', 'true')\n  }\n  res.headers.set('Vary', 'Origin')\n  return res\n}`,
    nginx: `Replace add_header Access-Control-Allow-Origin $http_origin with an allow-list (http block):\nmap $http_origin $cors_origin {\n  default "";\n  "${ALLOW_LIST_EXAMPLE}" $http_origin;\n}\nand in the location:\nadd_header Access-Control-Allow-Origin $cors_origin always;\nadd_header Access-Control-Allow-Credentials true always;\nadd_header Vary Origin always;\n(nginx omits a header whose value is empty, so other origins get no CORS headers.)`,
    cloudflare: `Fix the origin server first. As a stop-gap, a Worker can drop reflected CORS headers for unknown origins:\nconst ALLOWED = new Set(['${ALLOW_LIST_EXAMPLE}'])\nexport default { async fetch(req) {\n  const upstream = await fetch(req)\n  const res = new Response(upstream.body, upstream)\n  const origin = req.headers.get('Origin')\n  if (!origin || !ALLOWED.has(origin)) {\n    res.headers.delete('Access-Control-Allow-Origin')\n    res.headers.delete('Access-Control-Allow-Credentials')\n  }\n  return res\n} }`,
  },
  requires: ['cors'],
  optional: ['apiProbes'],
  run: ({ cors, apiProbes }) => withApiPaths(judgeMain(cors), apiProbes ?? []),
})

function judgeMain(cors: CorsProbeArtifact): CheckOutcome {
  if (cors.error || cors.status === 0) {
    return {
      status: 'skipped',
      evidence: { url: cors.url, probeOrigin: cors.origin, status: cors.status, error: cors.error ?? 'no response' },
      summary: `Not applicable: the CORS probe failed (${cors.error ?? 'no response'}).`,
    }
  }
  const { acao, credentials, evidence } = readAnswer(cors)
  if (acao === null)
    return {
      status: 'pass',
      evidence,
      summary: 'The server does not allow other origins to read the page (no Access-Control-Allow-Origin).',
    }
  if (acao === '*') {
    evidence.note = credentials
      ? 'Browsers refuse "*" on credentialed requests, so Access-Control-Allow-Credentials has no effect here.'
      : '"*" shares only what any anonymous client can fetch.'
    return { status: 'pass', evidence, summary: 'Access-Control-Allow-Origin is "*", which never shares responses made with cookies.' }
  }
  if (acao.includes(',')) return originList(acao, cors.origin, evidence)
  if (acao === cors.origin) return reflected(cors.origin, credentials, evidence)
  if (acao === 'null') return nullOrigin(credentials, evidence)
  return {
    status: 'pass',
    evidence,
    summary: `The probe origin was not allowed; Access-Control-Allow-Origin is the fixed origin ${acao}.`,
  }
}

const rank = (o: Pick<CheckOutcome, 'status' | 'severity'>) =>
  o.status === 'fail' ? 4 : o.status === 'warn' ? (o.severity === 'low' ? 1 : 2) : 0

/** The CORS probes of the page's API paths, merged into the main outcome: the worse of the two leads. */
function withApiPaths(main: CheckOutcome, probes: readonly ApiProbe[]): CheckOutcome {
  const sent = probes.filter((p) => p.kind === 'cors')
  if (sent.length === 0) return main
  const allowed: Array<{
    url: string
    method: string
    origin: string
    credentials: boolean
    outcome: Pick<CheckOutcome, 'status' | 'severity'>
  }> = []
  let wildcardWithCredentials = 0
  for (const p of sent) {
    if (p.status === 0 || !p.origin) continue
    const acao = headerValue(p.headers, 'access-control-allow-origin')
    const credentials = headerValue(p.headers, 'access-control-allow-credentials') === 'true'
    if (acao === '*' && credentials) wildcardWithCredentials++
    if (acao !== p.origin) continue
    const outcome = credentials
      ? { status: 'fail' as const }
      : { status: 'warn' as const, severity: p.origin === 'null' ? ('low' as const) : ('medium' as const) }
    allowed.push({ url: p.url, method: p.method, origin: p.origin, credentials, outcome })
  }
  // The worst first; among equals, each path's first answer before a second origin on a path already listed:
  // the evidence lists five, and a fix is made per path, so five paths say more than two paths twice. The
  // order the page's calls were seen in (which moves with the machine's load) then decides nothing more.
  // A path's first answer is its worst one, so the repeats are marked in that order.
  allowed.sort((a, b) => rank(b.outcome) - rank(a.outcome))
  const seen = new Set<string>()
  const repeat = new Map<(typeof allowed)[number], number>()
  for (const a of allowed) {
    repeat.set(a, seen.has(a.url) ? 1 : 0)
    seen.add(a.url)
  }
  allowed.sort((a, b) => rank(b.outcome) - rank(a.outcome) || repeat.get(a)! - repeat.get(b)!)
  const apiPaths: Record<string, unknown> = {
    probed: new Set(sent.map((p) => p.url)).size,
    requests: sent.length,
    allowed: allowed.slice(0, 5).map(({ outcome: _, ...a }) => a),
    ...(wildcardWithCredentials ? { wildcardWithCredentials, note: 'Browsers refuse "*" on credentialed requests.' } : {}),
  }
  const evidence = { ...main.evidence, apiPaths }
  const worst = allowed[0]
  if (!worst || rank(worst.outcome) <= rank(main)) {
    const paths = apiPaths.probed as number
    const also =
      !worst && main.status === 'pass' ? ` None of the ${paths} API path(s) the page called allows an unrelated origin either.` : ''
    return { ...main, evidence, summary: main.summary + also }
  }
  const how = worst.credentials ? "with the visitor's cookies" : '(without credentials)'
  return {
    ...worst.outcome,
    evidence,
    summary: `The API path ${worst.url} lets ${worst.origin === 'null' ? 'the origin "null" (any sandboxed iframe)' : `the unrelated origin ${worst.origin}`} read its answers ${how}${allowed.length > 1 ? `; ${allowed.length - 1} other API answer(s) allow it too` : ''}.`,
  }
}

/** The CORS headers of the probe's answer, and whether they enable credentials. */
function readAnswer(cors: CorsProbeArtifact) {
  const acao = headerValue(cors.headers, 'access-control-allow-origin')
  const acac = headerValue(cors.headers, 'access-control-allow-credentials')
  // Browsers compare byte for byte: only the exact value "true" enables credentials.
  const credentials = acac === 'true'
  const evidence: Record<string, unknown> = {
    url: cors.url,
    probeOrigin: cors.origin,
    status: cors.status,
    accessControlAllowOrigin: acao,
    accessControlAllowCredentials: acac,
    vary: headerValue(cors.headers, 'vary'),
  }
  if (acac !== null && !credentials) {
    evidence.credentialsNote = `Access-Control-Allow-Credentials "${acac}" is not exactly "true", so browsers do not share credentialed responses.`
  }
  return { acao, credentials, evidence }
}

/** Several values in Access-Control-Allow-Origin: browsers reject it, but a list holding the probe origin shows reflection. */
function originList(acao: string, probeOrigin: string, evidence: Record<string, unknown>): CheckOutcome {
  const reflectsInList = acao.split(',').some((o) => o.trim() === probeOrigin)
  evidence.note = `Access-Control-Allow-Origin holds several values; browsers reject it${reflectsInList ? ', but the list includes the probe origin: the server reflects origins and a duplicated header is all that stops it' : ''}.`
  if (reflectsInList) {
    return {
      status: 'warn',
      severity: 'medium',
      evidence,
      summary: 'The probe origin is reflected into a duplicated Access-Control-Allow-Origin, which browsers currently reject.',
    }
  }
  return {
    status: 'pass',
    evidence,
    summary: 'Access-Control-Allow-Origin lists several origins, which browsers reject; the probe origin is not among them.',
  }
}

function reflected(probeOrigin: string, credentials: boolean, evidence: Record<string, unknown>): CheckOutcome {
  if (credentials) {
    return {
      status: 'fail',
      evidence,
      summary: `Any site can read this page with the visitor's cookies: the server reflected the unrelated origin ${probeOrigin} with Access-Control-Allow-Credentials: true.`,
    }
  }
  return {
    status: 'warn',
    severity: 'medium',
    evidence,
    summary: `The server reflects the unrelated origin ${probeOrigin} into Access-Control-Allow-Origin (without credentials).`,
  }
}

function nullOrigin(credentials: boolean, evidence: Record<string, unknown>): CheckOutcome {
  if (credentials) {
    return {
      status: 'fail',
      evidence,
      summary:
        'Access-Control-Allow-Origin "null" with credentials: any site can read this page with the visitor\'s cookies from a ' +
        'sandboxed iframe.',
    }
  }
  return {
    status: 'warn',
    severity: 'low',
    evidence,
    summary: 'Access-Control-Allow-Origin is "null", which any site can claim from a sandboxed iframe.',
  }
}
