// Runs the pinned MDN HTTP Observatory (npm @mdn/mdn-http-observatory) on one target and prints one JSON
// object on stdout, in the shape of its own CLI (src/scan.js): { scan, tests } without the HTML
// scoreDescription, plus { via, ms }. Run with node (the package targets node >= 20):
//
//   node observatory-runner.mjs '{"target":"127.0.0.1:8080"}'
//       the package's own scan(): http://TARGET and https://TARGET, on the same port, like its CLI
//   node observatory-runner.mjs '{"host":"localhost","httpPort":8080,"httpsPort":8443}'
//       the same steps with the http and https forms on different ports (its retriever takes these
//       options, its scan() does not pass them on): what a real site does on ports 80 and 443
//   add "selfCheck": true to the first form to run both ways and report whether they agree
//
// Certificates: set NODE_EXTRA_CA_CERTS to trust a test certificate, as a real site's CA would be.
import { scan } from '@mdn/mdn-http-observatory/src/scanner/index.js'
import { retrieve } from '@mdn/mdn-http-observatory/src/retriever/retriever.js'
import { ALGORITHM_VERSION, ALL_TESTS, NUM_TESTS } from '@mdn/mdn-http-observatory/src/constants.js'
import { MINIMUM_SCORE_FOR_EXTRA_CREDIT } from '@mdn/mdn-http-observatory/src/grader/charts.js'
import { getGradeForScore, getScoreDescription, getScoreModifier } from '@mdn/mdn-http-observatory/src/grader/grader.js'

/**
 * The package's scan() (src/scanner/index.js, 1.4.8) line for line, except that `options` reaches
 * retrieve(), so the http and https forms can live on different ports.
 */
async function scanWithPorts(hostname, options) {
  const r = await retrieve(hostname, options)
  if (!r.responses.auto) throw new Error('The site seems to be down.')
  const { status } = r.responses.auto
  if (status < 200 || (status >= 400 && ![401, 403].includes(status))) {
    throw new Error(`Site did respond with an unexpected HTTP status code ${status}.`)
  }
  const results = ALL_TESTS.map((test) => test(r))
  const responseHeaders = Object.entries(r.responses.auto.headers).reduce((acc, [key, value]) => {
    acc[key] = value
    return acc
  }, {})
  const statusCode = r.responses.auto.status
  let testsPassed = 0
  let scoreWithExtraCredit = 100
  let uncurvedScore = scoreWithExtraCredit
  results.forEach((result) => {
    if (result.result) {
      result.scoreDescription = getScoreDescription(result.result)
      result.scoreModifier = getScoreModifier(result.result)
      testsPassed += result.pass ? 1 : 0
      scoreWithExtraCredit += result.scoreModifier
      if (result.scoreModifier < 0) uncurvedScore += result.scoreModifier
    }
  })
  const score = uncurvedScore >= MINIMUM_SCORE_FOR_EXTRA_CREDIT ? scoreWithExtraCredit : uncurvedScore
  const final = getGradeForScore(score)
  const tests = results.reduce((obj, result) => {
    obj[result.constructor.name] = result
    return obj
  }, {})
  return {
    scan: {
      algorithmVersion: ALGORITHM_VERSION,
      grade: final.grade,
      error: null,
      score: final.score,
      statusCode,
      testsFailed: NUM_TESTS - testsPassed,
      testsPassed,
      testsQuantity: NUM_TESTS,
      responseHeaders,
    },
    tests,
  }
}

/** What src/scan.js prints: the tests without their HTML description, as plain JSON. */
function cliShape(result) {
  const tests = Object.fromEntries(
    Object.entries(result.tests).map(([key, test]) => {
      const { scoreDescription, ...rest } = test
      return [key, rest]
    }),
  )
  return JSON.parse(JSON.stringify({ scan: result.scan, tests }))
}

/** The parts two runs must share to count as the same verdict. */
const verdicts = (r) => JSON.stringify([r.scan.score, r.scan.grade, Object.entries(r.tests).map(([k, t]) => [k, t.result, t.pass])])

const spec = JSON.parse(process.argv[2] ?? '{}')
const t0 = performance.now()
try {
  let out
  if (typeof spec.target === 'string') {
    out = { ...cliShape(await scan(spec.target)), via: 'scan()' }
    out.ms = performance.now() - t0
    if (spec.selfCheck) {
      const i = spec.target.lastIndexOf(':')
      const port = Number(spec.target.slice(i + 1))
      const replica = cliShape(await scanWithPorts(spec.target.slice(0, i), { httpPort: port, httpsPort: port }))
      out.selfCheck = { identical: verdicts(replica) === verdicts(out), replica: JSON.parse(verdicts(replica)) }
    }
  } else if (typeof spec.host === 'string' && Number.isInteger(spec.httpPort) && Number.isInteger(spec.httpsPort)) {
    out = {
      ...cliShape(await scanWithPorts(spec.host, { httpPort: spec.httpPort, httpsPort: spec.httpsPort })),
      via: 'retrieve(host, {httpPort, httpsPort}) + ALL_TESTS',
    }
    out.ms = performance.now() - t0
  } else {
    throw new Error(`bad spec ${process.argv[2]}`)
  }
  process.stdout.write(`${JSON.stringify(out)}\n`)
  process.exit(0)
} catch (e) {
  process.stdout.write(`${JSON.stringify({ error: e instanceof Error ? e.message : String(e), ms: performance.now() - t0 })}\n`)
  process.exit(1)
}
