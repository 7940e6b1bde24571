import { describe, expect, test } from 'bun:test'
import { exposedAgentInstructions, readInstructions } from '../../../shared/checks/exposure/exposed-agent-instructions.ts'
import { AGENT_INSTRUCTION_PROBES, BASELINE_PROBE } from '../../../shared/checks/probe-paths.ts'
import type { ProbeResult } from '../../../shared/checks/types.ts'
import { makeArtifacts, noise, probe, SPA_HTML } from './artifacts.ts'

const CLAUDE_MD = `# CLAUDE.md

This file gives guidance to coding agents working in this repository.

## Commands
- \`bun test\` runs the unit tests
- \`bun run dev\` starts the API on port 3000

## Conventions
Always use the repository pattern for database access and never call fetch from components.
`

const run = (probes: Record<string, ProbeResult>, baseline = probe(BASELINE_PROBE, SPA_HTML, 200, 'text/html')) =>
  exposedAgentInstructions.run(makeArtifacts({ probes: { [BASELINE_PROBE]: baseline, ...probes } }))

describe('exposed-agent-instructions', () => {
  test('fails a served CLAUDE.md, medium, with its first heading and size', () => {
    const r = run({ '/CLAUDE.md': probe('/CLAUDE.md', CLAUDE_MD, 200, 'text/markdown') })
    expect(r.status).toBe('fail')
    expect(r.severity).toBe('medium')
    expect(r.evidence.files).toEqual([
      {
        path: '/CLAUDE.md',
        url: 'https://example.com/CLAUDE.md',
        status: 200,
        contentType: 'text/markdown',
        firstLine: 'CLAUDE.md',
        size: CLAUDE_MD.length,
        secrets: [],
      },
    ])
  })

  test('covers every agent file path, including prose without Markdown', () => {
    const cursorrules = 'You are an expert in TypeScript and React.\nPrefer functional components and keep files under 200 lines.\n'
    for (const path of AGENT_INSTRUCTION_PROBES) {
      expect(run({ [path]: probe(path, path === '/.cursorrules' ? cursorrules : CLAUDE_MD) }).status).toBe('fail')
    }
    expect(readInstructions(cursorrules)?.firstLine).toBe('You are an expert in TypeScript and React.')
  })

  test('is high when the file contains a secret, which stays redacted', () => {
    const key = `sk_live_${noise(32, 11)}`
    const dbPassword = noise(18, 12)
    const body = `${CLAUDE_MD}\n## Access\nUse ${key} for Stripe and postgres://admin:${dbPassword}@db.internal/app for the database.\n`
    const r = run({ '/AGENTS.md': probe('/AGENTS.md', body) })
    expect(r.status).toBe('fail')
    expect(r.severity).toBe('high')
    const secrets = (r.evidence.files as Array<{ secrets: Array<{ kind: string }> }>)[0]!.secrets
    expect(secrets.map((s) => s.kind).sort()).toEqual(['connection-string-password', 'stripe-secret-key'])
    expect(JSON.stringify(r)).not.toContain(key)
    expect(JSON.stringify(r)).not.toContain(dbPassword)
  })

  test('placeholders in URLs are not secrets', () => {
    const body = `${CLAUDE_MD}\nConnect with postgres://app:\${DB_PASSWORD}@localhost/app or postgres://user:password@localhost/app.\n`
    expect(run({ '/AGENTS.md': probe('/AGENTS.md', body) }).severity).toBe('medium')
  })

  test('a Markdown file opening with an HTML comment is still a file', () => {
    expect(run({ '/AGENTS.md': probe('/AGENTS.md', `<!-- keep in sync with CLAUDE.md -->\n${CLAUDE_MD}`) }).status).toBe('fail')
  })

  test('a README-like CLAUDE.md is still a finding: the path makes it the agent file', () => {
    const readme = '# Shop\n\nA small online shop built with Next.js and Postgres. It sells coffee beans to people in Berlin.\n'
    expect(run({ '/CLAUDE.md': probe('/CLAUDE.md', readme) }).status).toBe('fail')
  })

  test('a Markdown catch-all (the same text as any unknown path) is not a finding', () => {
    const readme = '# Shop\n\nA small online shop built with Next.js and Postgres. It sells coffee beans to people in Berlin.\n'
    expect(run({ '/CLAUDE.md': probe('/CLAUDE.md', readme) }, probe(BASELINE_PROBE, readme)).status).toBe('pass')
  })

  test('passes index.html, HTML 404 pages, short error texts and JSON errors', () => {
    expect(run({ '/CLAUDE.md': probe('/CLAUDE.md', SPA_HTML, 200, 'text/html') }).status).toBe('pass')
    expect(
      run({
        '/CLAUDE.md': probe(
          '/CLAUDE.md',
          '<!DOCTYPE html><html><body><h1>404</h1><p>CLAUDE.md was not found</p></body></html>',
          404,
          'text/html',
        ),
      }).status,
    ).toBe('pass')
    expect(run({ '/CLAUDE.md': probe('/CLAUDE.md', 'The requested URL /CLAUDE.md was not found on this server.', 404) }).status).toBe(
      'pass',
    )
    expect(run({ '/AGENTS.md': probe('/AGENTS.md', '404 page not found', 404) }).status).toBe('pass')
    expect(
      run({ '/.cursorrules': probe('/.cursorrules', 'Forbidden: You do not have permission to access /.cursorrules on this server.', 403) })
        .status,
    ).toBe('pass')
    expect(
      run({
        '/AGENTS.md': probe(
          '/AGENTS.md',
          '{"error":"not found","message":"No route matches GET /AGENTS.md in this application"}',
          404,
          'application/json',
        ),
      }).status,
    ).toBe('pass')
  })

  test('passes binary bodies and too little text', () => {
    expect(
      run({ '/CLAUDE.md': probe('/CLAUDE.md', '\u0000\u0001\u0002PK\u0003\u0004 some binary content here that is long enough to count') })
        .status,
    ).toBe('pass')
    expect(run({ '/CLAUDE.md': probe('/CLAUDE.md', 'ok ok ok') }).status).toBe('pass')
  })

  test('is skipped when no probe got an answer', () => {
    const failed = Object.fromEntries(AGENT_INSTRUCTION_PROBES.map((p) => [p, { ...probe(p, ''), status: 0, error: 'timeout' }]))
    expect(run(failed).status).toBe('skipped')
  })
})
