import { describe, expect, test } from 'bun:test'
import { debugErrorPage } from '../../../shared/checks/exposure/debug-error-page.ts'
import { directoryListing } from '../../../shared/checks/exposure/directory-listing.ts'
import { exposedAgentInstructions } from '../../../shared/checks/exposure/exposed-agent-instructions.ts'
import { exposedEnvFile } from '../../../shared/checks/exposure/exposed-env-file.ts'
import { exposedFrameworkConfig } from '../../../shared/checks/exposure/exposed-framework-config.ts'
import { exposedGitConfig } from '../../../shared/checks/exposure/exposed-git-config.ts'
import { exposedLogFiles } from '../../../shared/checks/exposure/exposed-log-files.ts'
import { exposedPackageManifest } from '../../../shared/checks/exposure/exposed-package-manifest.ts'
import { exposedSourceMaps } from '../../../shared/checks/exposure/exposed-source-maps.ts'
import { exposedBackupFiles } from '../../../shared/checks/exposure/exposed-backup-files.ts'
import { exposedInfraFiles } from '../../../shared/checks/exposure/exposed-infra-files.ts'
import { exposedMetadataFiles } from '../../../shared/checks/exposure/exposed-metadata-files.ts'
import { serverInfoPage } from '../../../shared/checks/exposure/server-info-page.ts'
import { pageSecrets } from '../../../shared/checks/secrets/page-secrets.ts'
import { endOfLifeSoftware } from '../../../shared/checks/security/end-of-life-software.ts'
import { GATHER_LIMITS } from '../../../crawler/gather/limits.ts'
import {
  AGENT_INSTRUCTION_PROBES,
  BACKUP_PROBES,
  BASELINE_PROBE,
  DIRECTORY_PROBES,
  ENV_PROBES,
  FRAMEWORK_CONFIG_PROBES,
  GIT_PROBES,
  INFRA_PROBES,
  LOG_PROBES,
  MANIFEST_PROBES,
  METADATA_PROBES,
  PROBE_BUDGET,
  NODE_LISTING_PROBES,
  METRICS_PROBES,
  PROBE_PATHS,
  SERVER_INFO_PROBES,
} from '../../../shared/checks/probe-paths.ts'
import type { Artifacts, ProbeResult } from '../../../shared/checks/types.ts'
import { confirmByContent, isHtmlPage, notServedOutcome, sameAsBaseline } from '../../../shared/checks/util/probe.ts'
import { ADVERSARIAL_BODIES, makeArtifacts, noise, probe, SPA_HTML } from './artifacts.ts'
import { machineDeadline } from '../../harness/machine.ts'
import { countRegexWork } from '../../harness/regex-work.ts'

const DB_PASSWORD = noise(24, 3)
const DOTENV = [
  '# production',
  'NODE_ENV=production',
  `DATABASE_URL=postgres://app:${DB_PASSWORD}@db.internal:5432/app`,
  `STRIPE_SECRET_KEY=${noise(30, 4)}`,
  '',
  'export APP_NAME="shop"',
].join('\n')

/** Every probed path answering the same body, as a catch-all does. */
function everyPath(body: string, status = 200, contentType = 'text/html'): Record<string, ProbeResult> {
  return Object.fromEntries(PROBE_PATHS.map((p) => [p, probe(p, body, status, contentType)]))
}

const withProbes = (probes: Record<string, ProbeResult>, extra: Partial<Artifacts> = {}) =>
  makeArtifacts({ probes: { ...everyPath('not found', 404, 'text/plain'), ...probes }, ...extra } as Parameters<typeof makeArtifacts>[0])

const envRun = (body: string, status = 200, baseline = SPA_HTML) =>
  exposedEnvFile.run(
    makeArtifacts({
      probes: { [BASELINE_PROBE]: probe(BASELINE_PROBE, baseline, 200, 'text/html'), '/.env': probe('/.env', body, status) },
    }),
  )

const EXPOSURE_CHECKS = [
  exposedLogFiles,
  exposedEnvFile,
  exposedGitConfig,
  exposedAgentInstructions,
  exposedPackageManifest,
  exposedFrameworkConfig,
  directoryListing,
  debugErrorPage,
  exposedSourceMaps,
  exposedBackupFiles,
  exposedMetadataFiles,
  exposedInfraFiles,
  serverInfoPage,
  pageSecrets,
  endOfLifeSoftware,
]

describe('probe paths', () => {
  test('fit the request budget with the source maps and linked folders, are unique, absolute, and made of the named groups plus the baseline', () => {
    expect(PROBE_PATHS.length + GATHER_LIMITS.sourceMaps + GATHER_LIMITS.directoryLinks).toBeLessThanOrEqual(PROBE_BUDGET)
    expect(new Set(PROBE_PATHS).size).toBe(PROBE_PATHS.length)
    for (const p of PROBE_PATHS) expect(p.startsWith('/')).toBe(true)
    const groups = [
      ENV_PROBES,
      GIT_PROBES,
      AGENT_INSTRUCTION_PROBES,
      MANIFEST_PROBES,
      FRAMEWORK_CONFIG_PROBES,
      DIRECTORY_PROBES,
      BACKUP_PROBES,
      SERVER_INFO_PROBES,
      METADATA_PROBES,
      INFRA_PROBES,
      LOG_PROBES,
      NODE_LISTING_PROBES,
      METRICS_PROBES,
    ].flat()
    expect([...PROBE_PATHS].sort()).toEqual([BASELINE_PROBE, ...groups].sort())
  })
})

describe('the content gate', () => {
  test('an HTML page is not a file, PHP source and Markdown opening with a comment are', () => {
    expect(isHtmlPage(SPA_HTML)).toBe(true)
    expect(isHtmlPage('<!-- build 42 -->\n<!doctype html><html></html>')).toBe(true)
    expect(isHtmlPage("<?php\ndefine('DB_NAME', 'x');")).toBe(false)
    expect(isHtmlPage('<!-- generated -->\n# Agents\n\nRun bun test.')).toBe(false)
    expect(isHtmlPage('\uFEFF  KEY=value')).toBe(false)
  })

  test('a catch-all answer that echoes the path is still the baseline', () => {
    const probes = {
      [BASELINE_PROBE]: probe(BASELINE_PROBE, `{"error":"Cannot GET ${BASELINE_PROBE}"}`, 404, 'application/json'),
      '/package.json': probe('/package.json', '{"error":"Cannot GET /package.json"}', 404, 'application/json'),
    }
    expect(sameAsBaseline(probes['/package.json'], probes)).toBe(true)
  })

  test('states: not probed, unanswered, absent for each reason, confirmed', () => {
    const probes = {
      [BASELINE_PROBE]: probe(BASELINE_PROBE, 'nothing here', 404),
      '/a': probe('/a', 'yes'),
      '/b': { ...probe('/b', ''), status: 0, error: 'timeout' },
      '/c': probe('/c', SPA_HTML),
      '/d': probe('/d', 'nothing here', 404),
      '/e': probe('/e', 'no'),
      '/f': probe('/f', '  \n'),
    }
    const judge = (p: string) => confirmByContent(p, probes, 'a yes', (b) => (b === 'yes' ? b : null))
    expect(judge('/a')).toMatchObject({ state: 'confirmed', found: 'yes' })
    expect(judge('/b').state).toBe('unanswered')
    expect(judge('/c')).toMatchObject({ state: 'absent', reason: 'The answer is an HTML page, not a yes.' })
    expect(judge('/d')).toMatchObject({ state: 'absent', reason: 'The answer is the same as for a path that cannot exist.' })
    expect(judge('/e')).toMatchObject({ state: 'absent', reason: 'The answer does not look like a yes.' })
    expect(judge('/f')).toMatchObject({ state: 'absent', reason: 'The answer is empty.' })
    expect(judge('/zzz').state).toBe('not-probed')
    expect(notServedOutcome([judge('/b'), judge('/zzz')], 'things').status).toBe('skipped')
    expect(notServedOutcome([judge('/b'), judge('/e')], 'things').status).toBe('pass')
  })
})

describe('traps shared by every exposure check', () => {
  test('a single-page app answering 200 index.html at every path is no finding', () => {
    const a = makeArtifacts({ probes: everyPath(SPA_HTML), sourceMaps: [probe('/assets/index-3f2a.js.map', SPA_HTML, 200, 'text/html')] })
    for (const check of EXPOSURE_CHECKS) expect({ id: check.id, status: check.run(a).status }).toEqual({ id: check.id, status: 'pass' })
  })

  test('a plain-text catch-all identical to the baseline at every path is no finding', () => {
    const catchAll =
      '# Welcome\n\nThis server answers every request with this text.\n- Try again later, please, or contact support.\nSTATUS=OK\nMODE=catch-all\n'
    const a = makeArtifacts({ probes: everyPath(catchAll, 200, 'text/plain') })
    for (const check of EXPOSURE_CHECKS) expect({ id: check.id, status: check.run(a).status }).toEqual({ id: check.id, status: 'pass' })
  })

  test('an HTML 404 page mentioning the requested file is no finding', () => {
    const probes = Object.fromEntries(
      PROBE_PATHS.map((p) => [
        p,
        probe(
          p,
          `<!doctype html><html><body><h1>404</h1><p>The file ${p} (e.g. .env, package.json) was not found.</p></body></html>`,
          404,
          'text/html',
        ),
      ]),
    )
    const a = makeArtifacts({ probes })
    for (const check of EXPOSURE_CHECKS) expect({ id: check.id, status: check.run(a).status }).toEqual({ id: check.id, status: 'pass' })
  })

  test('a JSON error body at every path is no finding', () => {
    const a = withProbes(Object.fromEntries(PROBE_PATHS.map((p) => [p, probe(p, '{"error":"not found"}', 404, 'application/json')])))
    for (const check of EXPOSURE_CHECKS) expect({ id: check.id, status: check.run(a).status }).toEqual({ id: check.id, status: 'pass' })
  })

  test('a generic 500 page everywhere is no finding', () => {
    const page =
      '<html><head><title>500 Internal Server Error</title></head><body><center><h1>500 Internal Server Error</h1></center><hr><center>nginx</center></body></html>'
    const a = makeArtifacts({ mainResponse: { status: 500, body: page }, probes: everyPath(page, 500) })
    for (const check of EXPOSURE_CHECKS) expect({ id: check.id, status: check.run(a).status }).toEqual({ id: check.id, status: 'pass' })
  })

  test('every probe failing makes the file checks skipped, not passed', () => {
    const failed = Object.fromEntries(PROBE_PATHS.map((p) => [p, { ...probe(p, ''), status: 0, error: 'timeout' }]))
    const a = makeArtifacts({ probes: failed })
    for (const check of [
      exposedLogFiles,
      exposedEnvFile,
      exposedGitConfig,
      exposedAgentInstructions,
      exposedPackageManifest,
      exposedFrameworkConfig,
      exposedBackupFiles,
      exposedMetadataFiles,
      exposedInfraFiles,
    ]) {
      expect({ id: check.id, status: check.run(a).status }).toEqual({ id: check.id, status: 'skipped' })
    }
  })

  test(
    'every check reads 64 KiB adversarial bodies at every path a bounded number of times',
    () => {
      // The time they take is measured in bench/check-traps.ts.
      const over: string[] = []
      for (const body of ADVERSARIAL_BODIES) {
        const a = makeArtifacts({
          mainResponse: { body: body.repeat(4), status: 500 },
          probes: everyPath(body, 500, 'text/plain'),
          sourceMaps: [probe('/a.js.map', body, 200, 'application/json')],
        })
        // What the checks are given: the main body, one body per probed path and the source map.
        const given = body.length * (4 + Object.keys(a.probes).length + 1)
        for (const check of EXPOSURE_CHECKS) {
          const { scanned } = countRegexWork(() => check.run(a))
          if (scanned > 16 * given)
            over.push(`${check.id} on ${JSON.stringify(body.slice(0, 24))}: ${(scanned / given).toFixed(1)} readings`)
        }
      }
      // At most 16 readings of everything given (debug-error-page's patterns, the most, make 12): a check
      // that read a body again per line or per match would make thousands.
      expect(over).toEqual([])
      // Twenty-three bodies through every check at 75 paths: seconds of CPU, more on a loaded machine.
    },
    machineDeadline(20_000),
  )
})

describe('exposed-env-file', () => {
  test('fails a served dotenv file, critical when names look secret, showing names but no values', () => {
    const r = envRun(DOTENV)
    expect(r.status).toBe('fail')
    expect(r.severity).toBe('critical')
    expect(r.evidence.files).toMatchObject([
      {
        path: '/.env',
        status: 200,
        variables: 4,
        names: ['NODE_ENV', 'DATABASE_URL', 'STRIPE_SECRET_KEY', 'APP_NAME'],
        firstLine: 'NODE_ENV=***',
      },
    ])
    expect(JSON.stringify(r.evidence)).not.toContain(DB_PASSWORD)
  })

  test('covers every variant, with evidence per file', () => {
    const r = exposedEnvFile.run(
      withProbes({
        '/.env.local': probe('/.env.local', 'NODE_ENV=development\nPORT=3000\n'),
        '/.env.save': probe('/.env.save', DOTENV),
      }),
    )
    expect(r.status).toBe('fail')
    expect(r.severity).toBe('critical')
    const files = r.evidence.files as Array<{ path: string; names: string[]; secretNames: string[] }>
    expect(files.map((f) => f.path)).toEqual(['/.env.local', '/.env.save'])
    expect(files[1]!.secretNames).toEqual(['DATABASE_URL', 'STRIPE_SECRET_KEY'])
    expect(r.summary).toContain('/.env.local and /.env.save are served')
    expect(JSON.stringify(r.evidence)).not.toContain(DB_PASSWORD)
    for (const path of ENV_PROBES) {
      expect(exposedEnvFile.run(withProbes({ [path]: probe(path, DOTENV) })).status).toBe('fail')
    }
  })

  test('an HTML value inside a variable does not make the file a page', () => {
    expect(envRun(`MAIL_FROM=shop@example.com\nMAIL_TEMPLATE="<html><body>Hi</body></html>"\nSMTP_PASSWORD=${noise(16, 5)}\n`).status).toBe(
      'fail',
    )
  })

  test('is high, not critical, when no name looks secret', () => {
    const r = envRun('NODE_ENV=production\nPORT=3000\nLOG_LEVEL=info\n')
    expect(r.status).toBe('fail')
    expect(r.severity).toBe('high')
  })

  test('confirms by content even when the status is not 200', () => {
    expect(envRun(DOTENV, 403).status).toBe('fail')
  })

  test('passes a single-page app answering index.html at /.env', () => {
    expect(envRun(SPA_HTML).status).toBe('pass')
  })

  test('passes a plain-text body identical to the catch-all answer', () => {
    const catchAll = 'STATUS=OK\nMODE=catch-all\n'
    expect(envRun(catchAll, 200, catchAll).status).toBe('pass')
  })

  test('passes an HTML 404 page that mentions .env', () => {
    expect(
      envRun('<html><body><h1>Not Found</h1><p>/.env: DB_PASSWORD=... files are never served here.</p></body></html>', 404).status,
    ).toBe('pass')
  })

  test('passes a 200 with text that is not dotenv', () => {
    expect(envRun('Not found. Try again.\nOr go home.').status).toBe('pass')
  })

  test('passes lower-case or prose lines', () => {
    expect(envRun('hello=world\nthis is = not env\n').status).toBe('pass')
  })

  test('is skipped when the probe got no answer', () => {
    const r = exposedEnvFile.run(makeArtifacts({ probes: { '/.env': { ...probe('/.env', ''), status: 0, error: 'timeout' } } }))
    expect(r.status).toBe('skipped')
  })
})

const GIT_CONFIG = `[core]
\trepositoryformatversion = 0
\tfilemode = true
\tbare = false
[remote "origin"]
\turl = https://deploy:${noise(20, 9)}@github.com/acme/shop.git
\tfetch = +refs/heads/*:refs/remotes/origin/*
[branch "main"]
\tremote = origin
`

const gitRun = (body: string, path = '/.git/config') => exposedGitConfig.run(makeArtifacts({ probes: { [path]: probe(path, body) } }))

describe('exposed-git-config', () => {
  test('fails a served Git config, critical and said so when its remote URL holds a password, redacted', () => {
    const r = gitRun(GIT_CONFIG)
    expect(r.status).toBe('fail')
    expect(r.severity).toBe('critical')
    expect(r.evidence.remotes).toEqual([{ name: 'origin', url: 'https://***@github.com/acme/shop.git' }])
    expect(r.evidence.credentials).toEqual([{ where: 'remote "origin" url', kind: 'password-in-remote-url', value: expect.any(String) }])
    expect(r.summary).toContain('with a credential in it: password-in-remote-url')
    expect(JSON.stringify(r)).not.toContain(noise(20, 9))
  })

  test('a token as the remote URL user, a CI checkout header or a provider token anywhere is critical; a plain remote is high', () => {
    const token = `ghp_${noise(36, 71)}`
    const config = (lines: string) => `[core]\n\trepositoryformatversion = 0\n\tbare = false\n${lines}`
    const asUser = gitRun(config(`[remote "origin"]\n\turl = https://${token}@github.com/acme/shop.git\n`))
    expect(asUser.severity).toBe('critical')
    expect(asUser.evidence.credentials).toMatchObject([{ kind: 'github-token', where: 'remote "origin" url' }])
    const basic = btoa(`x-access-token:${token}`)
    const header = gitRun(config(`[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic ${basic}\n`))
    expect(header.severity).toBe('critical')
    expect(header.evidence.credentials).toMatchObject([{ kind: 'authorization-header', where: 'http "https://github.com/".extraheader' }])
    const anywhere = gitRun(config(`[credential]\n\thelper = store\n# ${token}\n`))
    expect(anywhere.evidence.credentials).toMatchObject([{ kind: 'github-token' }])
    for (const r of [asUser, header, anywhere]) expect(JSON.stringify(r)).not.toContain(token.slice(8))
    const plain = gitRun(config('[remote "origin"]\n\turl = https://github.com/acme/shop.git\n'))
    expect(plain.severity).toBeUndefined()
    expect(plain.evidence.credentials).toBeUndefined()
    expect(plain.summary).toContain('(remote https://github.com/acme/shop.git)')
  })

  test('fails a served .git/HEAD naming a branch or a commit', () => {
    const ref = gitRun('ref: refs/heads/main\n', '/.git/HEAD')
    expect(ref.status).toBe('fail')
    expect(ref.evidence.files).toMatchObject([{ path: '/.git/HEAD', ref: 'refs/heads/main' }])
    const sha = gitRun('3f1c9e2b4a5d6e7f8091a2b3c4d5e6f708192a3b\n', '/.git/HEAD')
    expect(sha.status).toBe('fail')
    expect(sha.evidence.files).toMatchObject([{ detached: '3f1c9e2b4a5d' }])
  })

  test('reports config and HEAD together', () => {
    const r = exposedGitConfig.run(
      withProbes({ '/.git/config': probe('/.git/config', GIT_CONFIG), '/.git/HEAD': probe('/.git/HEAD', 'ref: refs/heads/main') }),
    )
    expect(r.status).toBe('fail')
    expect((r.evidence.files as unknown[]).length).toBe(2)
    expect(r.summary).toContain('/.git/config and /.git/HEAD are served')
  })

  test('passes a single-page app answering index.html', () => {
    expect(gitRun(SPA_HTML).status).toBe('pass')
    expect(gitRun(SPA_HTML, '/.git/HEAD').status).toBe('pass')
  })

  test('passes text that mentions [core] without Git keys, and HEAD-like prose', () => {
    expect(gitRun('[core]\nname = value\n').status).toBe('pass')
    expect(gitRun('ref: refs/heads/main is where we keep things, see the docs', '/.git/HEAD').status).toBe('pass')
    expect(gitRun('404 Not Found', '/.git/HEAD').status).toBe('pass')
  })
})
