// Stack traces and framework debug pages served to anyone: the main response, the baseline probe (what an
// unknown path answers), every other probe, the answers the page's own API calls got (JSON 500s), and what a
// path that cannot exist under each API prefix the page used answers (/rest/<nonsense>: Express's error page).

import { LOG_PROBES } from '../probe-paths.ts'
import { type ApiProbe, type ApiTraffic, defineCheck, type HttpResponseArtifact, type ProbeResult } from '../types.ts'
import { decodeEntities } from '../util/html.ts'
import { clip } from '../util/http.ts'
import { isHtmlPage } from '../util/probe.ts'
import { redact } from '../util/redact.ts'
import { looksRandom } from '../util/secrets.ts'

const EXCERPT = 300
const WINDOW = 2_000
const MAX_ANCHORS = 20
const MAX_PAGES = 10
const MAX_URLS = 5
/** Where a generic trace counts on a 2xx page: at the very start, before any page content. */
const EARLY = 2_048

interface Rule {
  framework: string
  /**
   * Framework debug pages are recognised anywhere. Generic traces (Node, Python, PHP, Java) count only on an
   * error status, in a non-HTML body, or at the start of the body, so a page that quotes one is not a finding.
   */
  generic: boolean
  /** Index of the match to quote, or -1. */
  find(body: string): number
}

/** All markers must match; the first one's position is quoted. */
const all =
  (...markers: RegExp[]) =>
  (body: string) => {
    let first = -1
    for (const m of markers) {
      const hit = m.exec(body)
      if (!hit) return -1
      if (first === -1) first = hit.index
    }
    return first
  }

/** An anchor (global regex), confirmed by `confirm` in the text that follows it. */
const anchored = (anchor: RegExp, confirm: RegExp) => (body: string) => {
  let n = 0
  for (const m of body.matchAll(anchor)) {
    if (++n > MAX_ANCHORS) break
    if (confirm.test(body.slice(m.index, m.index + WINDOW))) return m.index
  }
  return -1
}

const JAVA_FRAME =
  /\bat (?:java|javax|jakarta|org|com|io|net|jdk|sun)\.[\w$.]{1,300}\([\w$.-]{0,200}(?:\.(?:java|kt|groovy|scala):\d+|Native Method|Unknown Source)\)/
const NODE_FRAME = /\bat [^\n<()]{0,200}\((?:\/|[A-Za-z]:\\|node:)[^\n<()]{1,300}:\d+:\d+\)/
/** A Node frame of an anonymous function: "at /app/server.js:10:9", no parentheses. */
const NODE_BARE_FRAME = /\bat (?:\/|[A-Za-z]:\\)[^\s<()"]{1,300}\.[cm]?[jt]sx?:\d+:\d+/

const RULES: readonly Rule[] = [
  {
    framework: 'Django',
    generic: false,
    find: (b) => {
      const debug = all(/seeing this error because you have (?:<code>)?DEBUG = True/, /Request (?:Method|URL):/)(b)
      return debug !== -1 ? debug : all(/Django Version:/, /Exception Location:/)(b)
    },
  },
  {
    framework: 'Werkzeug/Flask',
    generic: false,
    find: all(
      /The debugger caught an exception in your WSGI application|\/\/ Werkzeug Debugger<\/title>|__debugger__=yes&amp;cmd=resource/,
    ),
  },
  {
    framework: 'Laravel',
    generic: false,
    find: all(
      /class="Whoops container"|Whoops\\Run\b|\bwindow\.ignite\b|ignite\(window\.data\)|vendor\/laravel\/framework\/src\/Illuminate\/[\w/]{1,200}\.php/,
    ),
  },
  {
    framework: 'Rails',
    generic: false,
    find: all(/Action Controller: Exception caught/, /Rails\.root:|Application Trace|Framework Trace/),
  },
  {
    framework: 'ASP.NET',
    generic: false,
    find: all(
      /Server Error in (?:'|&#39;|&#039;)[^'&<\n]{0,100}(?:'|&#39;|&#039;) Application/,
      /Stack Trace:|Exception Details:|Source Error:/,
    ),
  },
  { framework: 'Spring Boot', generic: false, find: all(/Whitelabel Error Page/, JAVA_FRAME) },
  {
    framework: 'Symfony',
    generic: false,
    find: all(
      /class="exception-message-wrapper"|Symfony\\Component\\(?:ErrorHandler|HttpKernel|Debug)\\|<abbr title="Symfony\\Component\\/,
    ),
  },
  {
    framework: 'Next.js',
    generic: false,
    find: all(/nextjs-portal|data-nextjs-dialog|nextjs__container_errors|__nextjs_original-stack-frame|"err":\{[^{}]{0,3000}"stack":"/),
  },
  {
    framework: 'Node.js',
    generic: true,
    find: anchored(
      // Express 4 (Layer.handle), Express 5 and router (Layer.handleRequest), Koa (koa-compose dispatch), any frame in
      // node_modules, and Node's own internals.
      /\bat Layer\.handle(?:Request|_request|Error)?\b|\bat Object\.(?:<|&lt;)anonymous(?:>|&gt;) \((?:\/|[A-Za-z]:\\)|\bat Module\._compile\b|\bat (?:process\.)?processTicksAndRejections\b|\(node:internal\/|\bat [^\n<()]{0,200}\((?:\/|[A-Za-z]:\\)[^\n<()]{0,300}[/\\]node_modules[/\\]/g,
      new RegExp(`${NODE_FRAME.source}|${NODE_BARE_FRAME.source}`),
    ),
  },
  {
    framework: 'PHP',
    generic: true,
    find: anchored(
      /\b(?:Fatal error|Parse error|Warning|Notice|Deprecated)(?:<\/b>)?:/g,
      /\bin (?:<b>)?(?:\/|[A-Za-z]:\\)[^<\n]{1,300}?(?:<\/b>)? on line (?:<b>)?\d+|Stack trace:(?:\s|<br\s?\/?>){0,10}#0 /,
    ),
  },
  {
    framework: 'Python',
    generic: true,
    // In a JSON body the quotes are escaped: File \"/app/x.py\", line 3.
    find: anchored(/Traceback \(most recent call last\):/g, /File (?:\\?"|&quot;|&#34;)[^"&\n]{1,300}?(?:\\?"|&quot;|&#34;), line \d+/),
  },
  {
    framework: 'Java',
    generic: true,
    find: anchored(/\b(?:java|javax|jakarta|org|com)\.[\w$.]{1,200}(?:Exception|Error)\b/g, JAVA_FRAME),
  },
]

/**
 * Framework error answers in JSON (API error bodies), read from the body with its strings unescaped: Laravel's
 * debug JSON, Rails' development JSON, Spring Boot's error JSON with its trace, .NET stack frames.
 */
const JSON_RULES: readonly Rule[] = [
  { framework: 'Laravel', generic: false, find: all(/"exception"\s*:\s*"(?:Illuminate|Symfony)\\[\w\\]{1,200}"/, /"trace"\s*:\s*\[/) },
  { framework: 'Rails', generic: false, find: all(/"traces"\s*:\s*\{/, /"(?:Application|Framework|Full) Trace"\s*:\s*\[/) },
  {
    framework: 'Spring Boot',
    generic: false,
    find: all(/"trace"\s*:\s*"(?:java|javax|jakarta|org|com)\.[\w$.]{1,200}(?:Exception|Error)\b/, JAVA_FRAME),
  },
  { framework: '.NET', generic: true, find: all(/\bat [\w.`<>[\]+]{1,300}\([^()\n]{0,300}\) in (?:\/|[A-Za-z]:\\)[^\n"]{1,300}:line \d+/) },
]
/** A JSON body worth reading as an error: it has a trace, stack or exception field. */
const JSON_ERROR_KEY = /"(?:trace|traces|stack|stackTrace|exception|exceptionDetails)"\s*:/
const JSON_TEXT_LIMIT = 256 * 1024

/** A JSON error body with its strings unescaped (\/ \n \t \" \\), so the rules read a trace as a page shows it; else null. */
function jsonErrorText(body: string): string | null {
  const head = body.trimStart()[0]
  if ((head !== '{' && head !== '[') || !JSON_ERROR_KEY.test(body)) return null
  return body
    .slice(0, JSON_TEXT_LIMIT)
    .replace(/\\(["\\/ntr])/g, (_, c: string) => (c === 'n' ? '\n' : c === 't' ? '\t' : c === 'r' ? '\r' : c))
}

/** Frame names in angle brackets that are not tags: Object.<anonymous>, <module>. */
const FRAME_NAME = /<(anonymous|module|lambda|genexpr|listcomp|dictcomp|init|clinit|main)>/g
const SECRET_ASSIGNMENT =
  /\b([\w-]{0,40}(?:pass(?:word|wd)?|secret|token|api[_-]?key|auth|session|cookie|credential)[\w-]{0,40})(["']?\s*(?:=>|=|:)\s*)(["']?)[^\s"'<>,;]{1,200}/gi
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]{1,20}:\/\/)[^\s@/]{1,200}@/gi
const LONG_TOKEN = /[A-Za-z0-9_\-+/=]{24,400}/g

/** Tags stripped, entities decoded, whitespace collapsed, credentials and random-looking tokens redacted, cut at 300. */
export function redactedExcerpt(body: string, index: number): string {
  const start = Math.max(0, index - 40)
  let raw = body.slice(start, index + 1_200)
  // Do not start inside a tag cut in half.
  if (start > 0) raw = raw.replace(/^[^<>]{0,40}>/, '')
  const text = decodeEntities(
    raw
      .replace(FRAME_NAME, '&lt;$1&gt;')
      .replace(/<[^<>]{0,500}>/g, ' ')
      .replace(/&nbsp;/g, ' '),
  )
    .replace(/\s+/g, ' ')
    .trim()
    .replace(URL_CREDENTIALS, '$1***@')
    .replace(SECRET_ASSIGNMENT, '$1$2$3***')
    .replace(LONG_TOKEN, (t) => (looksRandom(t, 12) ? redact(t) : t))
  return clip(text, EXCERPT)
}

interface Answer {
  url: string
  status: number
  body: string
}

export interface DebugPage {
  framework: string
  url: string
  status: number
  excerpt: string
}

/** The first rule that recognises the body, with its excerpt, or null. */
export function findDebugPage(answer: Answer): DebugPage | null {
  const body = answer.body
  if (body.length < 40) return null
  for (const rule of RULES) {
    const index = rule.find(body)
    if (index === -1) continue
    if (rule.generic && answer.status < 400 && index >= EARLY && isHtmlPage(body)) continue
    return { framework: rule.framework, url: answer.url, status: answer.status, excerpt: redactedExcerpt(body, index) }
  }
  const text = jsonErrorText(body)
  if (text === null) return null
  for (const rule of [...JSON_RULES, ...RULES]) {
    const index = rule.find(text)
    if (index !== -1) return { framework: rule.framework, url: answer.url, status: answer.status, excerpt: redactedExcerpt(text, index) }
  }
  return null
}

/** Paths whose answer another check judges whole: a log file with a trace in it is exposed-log-files' finding. */
const JUDGED_ELSEWHERE = new Set<string>(LOG_PROBES)

const answers = (
  main: HttpResponseArtifact,
  probes: Record<string, ProbeResult>,
  api: ApiTraffic | undefined,
  apiProbes: readonly ApiProbe[],
): Answer[] => [
  { url: main.url, status: main.status, body: main.body },
  ...Object.values(probes).filter((p) => p.status !== 0 && !p.error && !JUDGED_ELSEWHERE.has(p.path)),
  ...(api?.calls ?? []).filter((c) => c.status !== 0 && c.body),
  ...apiProbes.filter((p) => p.kind === 'error' && p.status !== 0 && p.body),
]

export const debugErrorPage = defineCheck({
  id: 'debug-error-page',
  category: 'exposure',
  title: 'No debug pages or stack traces are shown',
  failTitle: 'A debug page or stack trace is shown',
  description:
    'Looks for framework debug pages and stack traces in the main response, in what an unknown path answers, in every probed ' +
    "path, in the answers the page's own API calls got while it loaded (JSON or HTML error bodies), and in what one GET of a " +
    'path that cannot exist under each API prefix the page used answers (/api/<nonsense>, /rest/<nonsense>; at most 2).',
  why:
    'Debug pages and stack traces reveal source paths, code, settings, library versions and sometimes environment variables, and show ' +
    'that the app runs in debug mode, which often enables more (e.g. the Werkzeug console).',
  confirmation:
    'Confirmed by content: framework debug pages (Django "You\u2019re seeing this error because you have DEBUG = True" with its ' +
    'request table, Werkzeug debugger, Laravel Whoops/Ignition or Illuminate frames, Rails "Action Controller: Exception caught", ' +
    'ASP.NET "Server Error in \'/\' Application" with exception details or stack trace, Spring Whitelabel page with a Java stack ' +
    'trace, Symfony\u2019s exception page, Next.js dev overlay or __NEXT_DATA__ error stack) anywhere; generic traces (Node.js ' +
    '"at Layer.handle" of Express 4, "at Layer.handleRequest" of Express 5, Koa\u2019s dispatch, any frame in node_modules or "at ' +
    'Object.<anonymous> (/...)" with file:line:column frames, PHP "Fatal error/Warning ... in /path on line N", Python "Traceback ' +
    '(most recent call last)" with File "...", line N, Java exception with frames) on an error status, in a non-HTML body (JSON error answers included), or at the ' +
    'very start of a page. JSON error bodies (with a trace, stack or exception field) are also read with their strings ' +
    'unescaped, and recognised as Laravel debug JSON ("exception": "Illuminate\\..." with a trace), Rails development JSON ' +
    '("traces" with "Application Trace"), Spring Boot error JSON (a "trace" with Java frames) or .NET frames ("at ... in ' +
    '/path:line N"), besides the rules above. Not findings: a generic "500 Internal Server Error" page without a trace, the Spring Whitelabel page ' +
    'without a trace, an ASP.NET "Runtime Error" page hiding details, a page that quotes a trace in its content. Evidence: URL, ' +
    'framework, a redacted excerpt of at most 300 characters.',
  severity: 'high',
  fix: {
    generic:
      'Run production with debug off and a generic error page: Django DEBUG = False, Laravel APP_DEBUG=false, Rails ' +
      'config.consider_all_requests_local = false, ASP.NET <customErrors mode="RemoteOnly"/>, PHP display_errors = Off (log_errors = ' +
      'On), Express NODE_ENV=production with an error handler that does not send err.stack, Spring ' +
      'server.error.include-stacktrace=never, Flask debug=False.',
    vercel:
      'Set NODE_ENV/APP_ENV to production in Project Settings > Environment Variables (Production scope), never deploy a dev server ' +
      '(next dev, vite) as the start command, and return a generic message from API error handlers instead of err.stack.',
    netlify:
      'Deploy the production build (not a dev server), set production variables (NODE_ENV=production, DEBUG unset) in Site ' +
      'configuration > Environment variables, and make Functions return a generic message instead of error.stack.',
    nextjs:
      'Serve the output of next build with next start (never next dev) and add app/error.tsx (or pages/_error.js) that shows a generic ' +
      'message; log details server-side only.',
    nginx:
      'Hide upstream error bodies and serve your own page:\nproxy_intercept_errors on;\nerror_page 500 502 503 504 /50x.html;\nlocation' +
      ' = /50x.html { internal; }\nand turn off debug mode in the application.',
    cloudflare:
      'Turn off debug mode at the origin. Meanwhile: Rules > Custom Error Rules (or Custom Pages) to replace 5xx responses from the ' +
      'origin with a generic error page.',
    express:
      "Start with NODE_ENV=production and end the middleware chain with an error handler that hides the stack:\napp.use((err, req, res, next) => { console.error(err); res.status(500).send('Something went wrong') })",
    django:
      'In settings.py for production:\nDEBUG = False\nALLOWED_HOSTS = ["example.com"]\nand a templates/500.html (and 404.html) with a generic message.',
    rails:
      'In config/environments/production.rb:\nconfig.consider_all_requests_local = false\nand run with RAILS_ENV=production (web-console only in the development group of the Gemfile).',
    apache:
      'PHP: in php.ini (or .user.ini) display_errors = Off, log_errors = On; Laravel: APP_DEBUG=false in .env. Then a generic page in .htaccess:\nErrorDocument 500 /500.html',
    caddy:
      'Turn debug off in the app, then replace the 5xx pages of the upstream in the site block:\nreverse_proxy localhost:8000 {\n  @error status 5xx\n  handle_response @error {\n    respond "Something went wrong" 500\n  }\n}',
    iis: 'In web.config:\n<system.web>\n  <customErrors mode="RemoteOnly" />\n  <compilation debug="false" />\n</system.web>\n<system.webServer>\n  <httpErrors errorMode="DetailedLocalOnly" />\n</system.webServer>',
  },
  requires: ['mainResponse', 'probes'],
  optional: ['page', 'apiProbes'],
  run: ({ mainResponse, probes, page, apiProbes }) => {
    const byFramework = new Map<string, DebugPage & { alsoAt: string[]; occurrences: number }>()
    const seen = new Set<string>()
    let checked = 0
    for (const answer of answers(mainResponse, probes, page?.api, apiProbes ?? [])) {
      if (seen.has(answer.url)) continue
      seen.add(answer.url)
      checked++
      const page = findDebugPage(answer)
      if (!page) continue
      const known = byFramework.get(page.framework)
      if (known) {
        known.occurrences++
        if (known.alsoAt.length < MAX_URLS) known.alsoAt.push(page.url)
      } else if (byFramework.size < MAX_PAGES) {
        byFramework.set(page.framework, { ...page, alsoAt: [], occurrences: 1 })
      }
    }
    if (byFramework.size === 0) {
      return {
        status: 'pass',
        evidence: { checked },
        summary: `No stack trace in ${checked} answers.`,
      }
    }
    const pages = [...byFramework.values()]
    const first = pages[0]!
    return {
      status: 'fail',
      evidence: { url: first.url, pages },
      summary: `${first.url} shows a ${first.framework} debug page or stack trace${first.occurrences > 1 ? ` (and ${first.occurrences - 1} other path(s))` : ''}${
        pages.length > 1
          ? `; also ${pages
              .slice(1)
              .map((p) => p.framework)
              .join(', ')}`
          : ''
      }.`,
    }
  },
})
