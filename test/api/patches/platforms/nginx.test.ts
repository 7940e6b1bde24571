// An nginx patch against its fixture repository, and what is particular to the platform.
import { afterAll, expect, test } from 'bun:test'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { buildPatch, type RepoView } from '../../../../api/patches/builder.ts'
import { patchFixture, removeRepos, sh, SOURCE } from '../patch-repos.ts'

afterAll(removeRepos)

test('an nginx patch applies to its fixture repository and nginx -t accepts the configuration', async () => {
  const { dir, plan } = patchFixture('nginx')
  const conf = readFileSync(join(dir, 'conf.d/site.conf'), 'utf8')
  expect(conf).toContain('return 301 https://$host$request_uri;')
  expect(conf).toContain('add_header X-Content-Type-Options "nosniff" always;')
  expect(conf).toContain('proxy_cookie_flags ~ secure httponly;')
  expect(conf).toContain('server_tokens off;')
  // nginx itself accepts the result.
  const certs = join(dir, 'certs')
  sh(['mkdir', '-p', certs], dir)
  const ssl = sh(
    [
      'openssl',
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-subj',
      '/CN=app.example.com',
      '-days',
      '1',
      '-keyout',
      join(certs, 'app.key'),
      '-out',
      join(certs, 'app.pem'),
    ],
    dir,
  )
  expect(ssl.code).toBe(0)
  writeFileSync(
    join(dir, 'test-nginx.conf'),
    `pid ${dir}/nginx.pid;\nerror_log ${dir}/error.log;\nevents {}\nhttp {\n  access_log off;\n  include ${dir}/conf.d/site.conf;\n}\n`,
  )
  const t = sh(['nginx', '-t', '-q', '-p', dir, '-c', join(dir, 'test-nginx.conf')], dir)
  if (t.code !== 0) console.error(t.err)
  expect(t.code).toBe(0)
  expect(plan.edits.length).toBeGreaterThan(0)
})

test('repository paths with newlines or .. are never read or written', () => {
  const repo: RepoView = {
    paths: ['conf.d/x.conf\n+++ b/evil', '../outside.conf', 'ok/../../x.conf'],
    read: (p) => (p.endsWith('.conf') || p.includes('\n') ? 'server {\n    listen 80;\n}\n' : null),
  }
  const plan = buildPatch('nginx', SOURCE, repo)
  for (const e of plan.edits) expect(e.path).toBe('nginx/snippets/security-headers.conf')
})
