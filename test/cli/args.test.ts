// The command line's rules, checked before anything is sent.
import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { main } from '../../cli/appaudit.ts'
import { type Options, parseCommandLine } from '../../cli/args.ts'
import { Failure } from '../../cli/client.ts'

const ENV = { APPAUDIT_URL: 'http://127.0.0.1:8787', APPAUDIT_KEY: 'act_x' }
const dir = mkdtempSync(join(tmpdir(), 'appaudit-args-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const options = (argv: string[], env: Record<string, string> = ENV): Options => {
  const line = parseCommandLine(argv, env)
  if (line.kind !== 'run') throw new Error(`expected a run, got ${line.kind}`)
  return line.options
}

function refusal(argv: string[], env: Record<string, string> = ENV): Failure {
  try {
    parseCommandLine(argv, env)
  } catch (e) {
    if (e instanceof Failure) return e
    throw e
  }
  throw new Error('expected a usage error')
}

describe('usage errors', () => {
  test.each([
    [[], {}, 'no command'],
    [['deploy', 'https://a.example/'], ENV, 'unknown command'],
    [['scan'], ENV, 'no URL'],
    [['scan', 'a.example'], ENV, 'not an absolute http or https URL'],
    [['scan', 'https://a.example/', 'extra'], ENV, 'unexpected argument'],
    [['scan', 'https://a.example/', '--bogus'], ENV, "Unknown option '--bogus'"],
    [['scan', 'https://a.example/', '--min-score', '101'], ENV, '--min-score must be a whole number from 0 to 100'],
    [['scan', 'https://a.example/', '--min-score', '7.5'], ENV, '--min-score must be a whole number'],
    [['scan', 'https://a.example/', '--fail-on', 'severe'], ENV, '--fail-on must be one of critical, high, medium, low'],
    [['scan', 'https://a.example/', '--format', 'pdf'], ENV, '--format must be one of'],
    [['scan', 'https://a.example/', '--output', 'report.txt'], ENV, 'give --format'],
    [['scan', 'https://a.example/', '--format', 'junit', '--sarif-path', 'vercel.json'], ENV, '--sarif-path is for --format sarif'],
    [['scan', 'https://a.example/', '--format', 'sarif', '--sarif-path', '../up.json'], ENV, 'give a path inside the repository'],
    [['scan', 'https://a.example/', '--format', 'sarif', '--sarif-path', 'https://a.example/'], ENV, 'give a path inside the repository'],
    [['scan', 'https://a.example/', '--max-pages', '3'], ENV, '--max-pages is for audit'],
    [['scan', 'https://a.example/', '--baseline', 'no-such-file.json'], ENV, 'no such file, and not a scan or audit id'],
    [['audit', 'https://a.example/', '--fail-on', 'high'], ENV, "--fail-on needs the audit's result: add --wait"],
    [['audit', 'https://a.example/', '--wait', '--max-depth', '11'], ENV, '--max-depth must be a whole number from 0 to 10'],
    [['scan', 'https://a.example/'], { APPAUDIT_KEY: 'act_x' }, 'no service URL'],
    [['scan', 'https://a.example/'], { APPAUDIT_URL: 'http://s' }, 'no key'],
  ])('%p is refused with exit 2: %s', (argv, env, says) => {
    const e = refusal(argv as string[], env as Record<string, string>)
    expect(e.exitCode).toBe(2)
    expect(e.message).toContain(says as string)
  })
})

describe('accepted command lines', () => {
  test('--help and --version win over everything else', () => {
    expect(parseCommandLine(['scan', '--help'], {}).kind).toBe('help')
    expect(parseCommandLine(['-v'], {}).kind).toBe('version')
  })

  test('flags override the environment, and a scan always waits with a 120 s bound', () => {
    const o = options(['scan', 'https://a.example/', '--url', 'http://other', '--key', 'mca_y'])
    expect([o.serviceUrl, o.key, o.wait, o.timeoutS]).toEqual(['http://other', 'mca_y', true, 120])
  })

  test('an audit waits only with --wait, 20 minutes unless --timeout says otherwise', () => {
    expect(options(['audit', 'https://a.example/']).wait).toBe(false)
    const o = options(['audit', 'https://a.example/', '--wait', '--max-pages', '5', '--max-depth', '0', '--timeout', '60'])
    expect([o.wait, o.maxPages, o.maxDepth, o.timeoutS]).toEqual([true, 5, 0, 60])
    expect(options(['audit', 'https://a.example/', '--wait']).timeoutS).toBe(1200)
  })

  test('--baseline is a file when one exists, else a scan or audit id', () => {
    const file = join(dir, 'scn_looks_like_an_id')
    writeFileSync(file, '{}')
    expect(options(['scan', 'https://a.example/', '--baseline', file]).baseline).toEqual({ kind: 'file', path: file })
    expect(options(['scan', 'https://a.example/', '--baseline', 'aud_4Vq9']).baseline).toEqual({ kind: 'id', id: 'aud_4Vq9' })
  })

  test('--output alone takes its format from the extension', () => {
    expect(options(['scan', 'https://a.example/', '--output', 'out/r.sarif']).format).toBe('sarif')
    expect(options(['scan', 'https://a.example/', '--output', 'junit.xml']).format).toBe('junit')
    expect(options(['scan', 'https://a.example/', '-o', 'r.md']).format).toBe('markdown')
  })

  test('--sarif-path goes with a SARIF report, an empty one (the action unset) with any', () => {
    expect(options(['scan', 'https://a.example/', '-o', 'r.sarif', '--sarif-path', 'app/layout.tsx']).sarifPath).toBe('app/layout.tsx')
    expect(options(['scan', 'https://a.example/', '--sarif-path', '']).sarifPath).toBeUndefined()
  })
})

describe('main', () => {
  const capture = () => {
    const chunks: string[] = []
    return { chunks, stream: { isTTY: false, write: (s: string) => chunks.push(s) } }
  }

  test('a usage error goes to stderr with a pointer to --help, and stdout stays empty', async () => {
    const out = capture()
    const err = capture()
    expect(await main(['scan'], {}, { stdout: out.stream, stderr: err.stream })).toBe(2)
    expect(out.chunks).toEqual([])
    expect(err.chunks.join('')).toBe('appaudit: no URL to scan: appaudit scan <url>\nRun appaudit --help for usage.\n')
  })

  test('with --json a usage error is a JSON document on stdout', async () => {
    const out = capture()
    expect(await main(['scan', 'nope', '--json'], {}, { stdout: out.stream, stderr: capture().stream })).toBe(2)
    expect(JSON.parse(out.chunks.join(''))).toMatchObject({ result: 'usage or configuration error', exitCode: 2, error: { code: 'usage' } })
  })
})
