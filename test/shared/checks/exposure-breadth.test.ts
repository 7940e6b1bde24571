// The exposure kinds beyond dotenv and Git: dumps and archives, server information pages, editor and
// version-control metadata, container/CI/credential files, secrets in HTML and end-of-life software. Each
// kind: the real format is found, the traps next to it are not, and values never reach the evidence.
import { describe, expect, test } from 'bun:test'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { exposedBackupFiles, readArchive, readSqlDump } from '../../../shared/checks/exposure/exposed-backup-files.ts'
import { exposedInfraFiles } from '../../../shared/checks/exposure/exposed-infra-files.ts'
import { dsStoreNames, exposedMetadataFiles } from '../../../shared/checks/exposure/exposed-metadata-files.ts'
import { findInfoPage, serverInfoPage } from '../../../shared/checks/exposure/server-info-page.ts'
import { BASELINE_PROBE } from '../../../shared/checks/probe-paths.ts'
import { pageSecrets } from '../../../shared/checks/secrets/page-secrets.ts'
import { endOfLifeSoftware } from '../../../shared/checks/security/end-of-life-software.ts'
import type { ProbeResult } from '../../../shared/checks/types.ts'
import { dsStore } from '../../fixtures/sites/nginx-careless.ts'
import { vimSwapFile } from '../../fixtures/sites/php-builtin.ts'
import { makeArtifacts, noise, probe, SPA_HTML, withHeaders } from './artifacts.ts'
import { countRegexWork } from '../../harness/regex-work.ts'

/** A probe answer with binary content, as the gatherer keeps it: text for the body, the first bytes in `head`. */
function binary(path: string, bytes: Uint8Array, contentType = 'application/octet-stream'): ProbeResult {
  return {
    ...probe(path, Buffer.from(bytes).toString('utf8'), 200, contentType),
    head: Buffer.from(bytes.subarray(0, 512)).toString('base64'),
  }
}

const withProbes = (probes: Record<string, ProbeResult>, baseline = probe(BASELINE_PROBE, 'Not Found', 404)) =>
  makeArtifacts({ probes: { [BASELINE_PROBE]: baseline, ...probes } })

const PASSWORD = noise(16, 31)

const MYSQLDUMP = `-- MySQL dump 10.13  Distrib 8.0.36, for Linux (x86_64)
--
-- Host: localhost    Database: shop
-- ------------------------------------------------------
DROP TABLE IF EXISTS \`users\`;
CREATE TABLE \`users\` (
  \`id\` int NOT NULL AUTO_INCREMENT,
  \`email\` varchar(255) NOT NULL,
  \`password_hash\` varchar(60) NOT NULL,
  PRIMARY KEY (\`id\`)
) ENGINE=InnoDB;
LOCK TABLES \`users\` WRITE;
INSERT INTO \`users\` VALUES (1,'ann@shop.test','$2y$10$${noise(53, 3)}');
UNLOCK TABLES;
`

describe('exposed-backup-files', () => {
  test('a mysqldump with rows is critical; tables and the row count are shown, never the rows', () => {
    const r = exposedBackupFiles.run(withProbes({ '/backup.sql': probe('/backup.sql', MYSQLDUMP, 200, 'application/octet-stream') }))
    expect(r.status).toBe('fail')
    expect(r.severity).toBe('critical')
    const file = (r.evidence.files as Array<Record<string, unknown>>)[0]!
    expect(file).toMatchObject({ kind: 'sql-dump', dialect: 'MySQL', tables: ['users'], dataStatements: 1, accountData: true })
    expect(JSON.stringify(r)).not.toContain('ann@shop.test')
  })

  test('a pg_dump schema without data is high; statements alone (no header) count when there are three of two kinds', () => {
    const pg = '--\n-- PostgreSQL database dump\n--\nCREATE TABLE public.orders (\n    id integer NOT NULL\n);\n'
    expect(readSqlDump(pg)).toMatchObject({ dialect: 'PostgreSQL', tables: ['public.orders'], dataStatements: 0 })
    expect(exposedBackupFiles.run(withProbes({ '/dump.sql': probe('/dump.sql', pg) })).severity).toBe('high')
    expect(readSqlDump('CREATE TABLE a (x int);\nINSERT INTO a VALUES (1);\nINSERT INTO a VALUES (2);\n')?.dialect).toBe('SQL')
    // Prose about SQL, or one statement, is not a dump.
    expect(readSqlDump('How to back up: run mysqldump and keep the file out of the web root. INSERT INTO is explained below.')).toBeNull()
    expect(readSqlDump('CREATE TABLE a (x int);')).toBeNull()
  })

  test('archives by their magic bytes: a real tar.gz and zip, with the first entry name', () => {
    const dir = mkdtempSync(join(tmpdir(), 'archive-'))
    try {
      writeFileSync(join(dir, 'config.php'), "<?php define('DB_PASSWORD', 'x');")
      execFileSync('tar', ['czf', join(dir, 'site.tar.gz'), '-C', dir, 'config.php'])
      const tgz = Uint8Array.from(readFileSync(join(dir, 'site.tar.gz')))
      expect(readArchive(tgz)?.format).toBe('gzip')
      const r = exposedBackupFiles.run(withProbes({ '/site.tar.gz': binary('/site.tar.gz', tgz, 'application/x-gzip') }))
      expect(r.status).toBe('fail')
      expect(r.severity).toBe('high')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
    // A zip's local file header: PK\x03\x04, then the name at byte 30 with its length at 26.
    const name = Buffer.from('www/config.php')
    const zip = new Uint8Array(30 + name.length + 4)
    zip.set([0x50, 0x4b, 0x03, 0x04])
    zip[26] = name.length
    zip.set(name, 30)
    expect(readArchive(zip)).toEqual({ kind: 'archive', format: 'zip', firstEntry: 'www/config.php' })
    expect(readArchive(new TextEncoder().encode('PK is a text file'))).toBeNull()
  })

  test('config backups: PHP, Django settings and web.config, critical with a literal password', () => {
    const php = `<?php\ndefine('DB_NAME', 'shop');\ndefine('DB_USER', 'shop');\ndefine('DB_PASSWORD', '${PASSWORD}');\n`
    const django = `SECRET_KEY = '${noise(50, 5)}'\nDEBUG = False\nINSTALLED_APPS = ['shop']\nDATABASES = {'default': {'PASSWORD': '${PASSWORD}'}}\n`
    const webConfig = `<?xml version="1.0"?>\n<configuration>\n  <connectionStrings>\n    <add name="db" connectionString="Server=db;Database=shop;User Id=sa;Password=${PASSWORD};" />\n  </connectionStrings>\n</configuration>\n`
    const r = exposedBackupFiles.run(
      withProbes({
        '/config.php.bak': probe('/config.php.bak', php),
        '/settings.py.bak': probe('/settings.py.bak', django),
        '/web.config.bak': probe('/web.config.bak', webConfig, 200, 'application/xml'),
      }),
    )
    expect(r.severity).toBe('critical')
    const files = r.evidence.files as Array<Record<string, unknown>>
    expect(files.map((f) => [f.path, f.language, f.credentials])).toEqual([
      ['/config.php.bak', 'PHP', true],
      ['/settings.py.bak', 'Django settings', true],
      ['/web.config.bak', 'web.config', true],
    ])
    expect(JSON.stringify(r)).not.toContain(PASSWORD)
    // Placeholders are not credentials.
    const template = "<?php\ndefine('DB_NAME', 'shop');\ndefine('DB_PASSWORD', 'changeme');\n"
    expect(exposedBackupFiles.run(withProbes({ '/config.php~': probe('/config.php~', template) })).severity).toBe('high')
  })

  test('an SPA answering index.html and an XHTML page at every path are no finding', () => {
    const xhtml =
      '<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE html>\n<html xmlns="http://www.w3.org/1999/xhtml"><body>404</body></html>'
    expect(exposedBackupFiles.run(withProbes({ '/web.config.bak': probe('/web.config.bak', xhtml, 404, 'text/html') })).status).toBe('pass')
    const spa = probe(BASELINE_PROBE, SPA_HTML, 200, 'text/html')
    expect(exposedBackupFiles.run(withProbes({ '/backup.sql': probe('/backup.sql', SPA_HTML, 200, 'text/html') }, spa)).status).toBe('pass')
  })
})

describe('server-info-page', () => {
  const statusPage = (extended: boolean) =>
    `<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 3.2 Final//EN">\n<html><head>\n<title>Apache Status</title>\n</head><body>\n<h1>Apache Server Status for 127.0.0.1 (via 127.0.0.1)</h1>\n<dl><dt>Server Version: Apache/2.4.71 (Debian)</dt>\n<dt>Server MPM: event</dt></dl>` +
    (extended
      ? '<table><tr><th>Srv</th><th>PID</th><th>Client</th><th>Req</th></tr><tr><td>0-0</td><td>12</td><td>10.1.2.3</td><td nowrap>GET /reset?token=abc HTTP/1.1</td></tr></table>'
      : '') +
    '</body></html>'

  test('Apache mod_status: medium, high when ExtendedStatus lists request lines', () => {
    const plain = serverInfoPage.run(withProbes({ '/server-status': probe('/server-status', statusPage(false), 200, 'text/html') }))
    expect(plain.status).toBe('fail')
    expect(plain.severity).toBe('medium')
    expect(JSON.stringify(plain.evidence)).toContain('Apache/2.4.71 (Debian)')
    const extended = serverInfoPage.run(withProbes({ '/server-status': probe('/server-status', statusPage(true), 200, 'text/html') }))
    expect(extended.severity).toBe('high')
  })

  test('nginx stub_status, phpinfo with secret-looking variables (names only), a PIN-less Werkzeug console', () => {
    expect(
      findInfoPage({
        url: 'u',
        status: 200,
        body: 'Active connections: 1 \nserver accepts handled requests\n 1 1 4 \nReading: 0 Writing: 1 Waiting: 0 \n',
      })?.software,
    ).toBe('nginx')
    const phpinfo =
      '<!DOCTYPE html><html><head><title>PHP 8.2.36 - phpinfo()</title></head><body><h1 class="p">PHP Version 8.2.36</h1>' +
      '<table><tr><td class="e">System </td><td class="v">Linux</td></tr>' +
      `<tr><td class="e">$_SERVER['DB_PASSWORD']</td><td class="v">${PASSWORD}</td></tr></table></body></html>`
    const info = findInfoPage({ url: 'u', status: 200, body: phpinfo })!
    expect(info).toMatchObject({ software: 'PHP', severity: 'high', details: { phpVersion: '8.2.36', secretVariables: ['DB_PASSWORD'] } })
    expect(JSON.stringify(info)).not.toContain(PASSWORD)
    const console =
      '<!doctype html><title>Console // Werkzeug Debugger</title><script>var CONSOLE_MODE = true, EVALEX = true, EVALEX_TRUSTED = true</script>'
    expect(findInfoPage({ url: 'u', status: 200, body: console })?.severity).toBe('critical')
  })

  test('pages that only mention them, 403 pages and the catch-all answer are no finding', () => {
    const blog =
      '<html><title>Monitoring Apache</title><p>Enable mod_status and visit /server-status to see the Apache Server Status for your host; phpinfo() shows the PHP Version.</p></html>'
    const forbidden =
      "<html><head><title>403 Forbidden</title></head><body><h1>Forbidden</h1><p>You don't have permission to access /server-status</p></body></html>"
    const r = serverInfoPage.run(
      withProbes({
        '/server-status': probe('/server-status', forbidden, 403, 'text/html'),
        '/info.php': probe('/info.php', blog, 200, 'text/html'),
      }),
    )
    expect(r.status).toBe('pass')
    const spa = probe(BASELINE_PROBE, statusPage(false), 200, 'text/html')
    expect(
      serverInfoPage.run(withProbes({ '/server-status': probe('/server-status', statusPage(false), 200, 'text/html') }, spa)).status,
    ).toBe('pass')
  })
})

describe('exposed-metadata-files', () => {
  test('a real .DS_Store lists its file names; a vim swap file of a PHP page is high', () => {
    const names = ['backup-2024.zip', 'admin', 'config.php']
    const store = dsStore(names)
    expect(dsStoreNames(Buffer.from(store).toString('utf8'))).toEqual(expect.arrayContaining(names))
    const swap = vimSwapFile(['<?php', "$db = 'x';"])
    const r = exposedMetadataFiles.run(
      withProbes({ '/.DS_Store': binary('/.DS_Store', store), '/.index.php.swp': binary('/.index.php.swp', swap) }),
    )
    expect(r.status).toBe('fail')
    expect(r.severity).toBe('high')
    const files = r.evidence.files as Array<Record<string, unknown>>
    expect(files[0]).toMatchObject({ path: '/.DS_Store', tool: 'macOS Finder (.DS_Store)' })
    expect(files[1]).toMatchObject({ path: '/.index.php.swp', tool: 'vim swap file', user: 'dev' })
  })

  test('Subversion, Mercurial and Bazaar working copies; credentials in remotes removed', () => {
    const sqlite = new Uint8Array([...Buffer.from('SQLite format 3\u0000', 'latin1'), ...new Uint8Array(100)])
    const wc = {
      ...binary('/.svn/wc.db', sqlite),
      body: `${Buffer.from(sqlite).toString('utf8')}CREATE TABLE REPOSITORY (id INTEGER, root TEXT) https://svn.example.org/repos/shop`,
    }
    const r = exposedMetadataFiles.run(
      withProbes({
        '/.svn/wc.db': wc,
        '/.hg/requires': probe('/.hg/requires', 'dotencode\nfncache\ngeneraldelta\nrevlogv1\nsparserevlog\nstore\n'),
        '/.hg/hgrc': probe('/.hg/hgrc', `[paths]\ndefault = https://deploy:${PASSWORD}@hg.example.org/shop\n`),
        '/.bzr/branch-format': probe('/.bzr/branch-format', 'Bazaar-NG meta directory, format 1\n'),
      }),
    )
    expect(r.status).toBe('fail')
    expect((r.evidence.files as unknown[]).length).toBe(4)
    expect(JSON.stringify(r)).toContain('https://***@hg.example.org/shop')
    expect(JSON.stringify(r)).not.toContain(PASSWORD)
  })

  test('IDE folders: sftp.json with a password is critical (names only); settings.json is low; random JSON is not one', () => {
    const sftp = JSON.stringify({
      name: 'prod',
      host: 'ftp.shop.test',
      protocol: 'sftp',
      username: 'deploy',
      password: PASSWORD,
      remotePath: '/var/www',
    })
    const r = exposedMetadataFiles.run(withProbes({ '/.vscode/sftp.json': probe('/.vscode/sftp.json', sftp, 200, 'application/json') }))
    expect(r.severity).toBe('critical')
    expect(JSON.stringify(r)).not.toContain(PASSWORD)
    const settings = '{\n  // editor\n  "editor.formatOnSave": true,\n  "files.exclude": {"**/.git": true}\n}'
    expect(exposedMetadataFiles.run(withProbes({ '/.vscode/settings.json': probe('/.vscode/settings.json', settings) })).severity).toBe(
      'low',
    )
    const api = '{"error":"not found","code":404}'
    expect(exposedMetadataFiles.run(withProbes({ '/.vscode/settings.json': probe('/.vscode/settings.json', api, 404) })).status).toBe(
      'pass',
    )
  })
})

describe('exposed-infra-files', () => {
  test('a Dockerfile with a literal secret ENV is high; one taking it from a build arg is medium', () => {
    const leaky = `FROM node:18\nWORKDIR /app\nENV NODE_ENV=production \\\n    STRIPE_SECRET_KEY=${PASSWORD}\nCOPY . .\nCMD ["node", "server.js"]\n`
    const r = exposedInfraFiles.run(withProbes({ '/Dockerfile': probe('/Dockerfile', leaky) }))
    expect(r.status).toBe('fail')
    expect(JSON.stringify(r.evidence)).toContain('node:18')
    const clean = 'FROM node:18\nARG NPM_TOKEN\nENV API_KEY=${API_KEY}\nRUN npm ci\n'
    expect(exposedInfraFiles.run(withProbes({ '/Dockerfile': probe('/Dockerfile', clean) })).severity).toBe('medium')
    expect(JSON.stringify(r)).not.toContain(PASSWORD)
  })

  test('credentials files are critical: AWS, Docker registry auth, kubeconfig token, an unencrypted private key', () => {
    const aws = `[default]\naws_access_key_id = AKIA${noise(16, 9, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567')}\naws_secret_access_key = ${noise(40, 10)}\n`
    const docker = JSON.stringify({ auths: { 'registry.shop.test': { auth: Buffer.from(`ci:${PASSWORD}`).toString('base64') } } })
    const kube = `apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n    server: https://10.0.0.1:6443\n  name: prod\nusers:\n- name: admin\n  user:\n    token: ${noise(40, 11)}\n`
    const key = `-----BEGIN OPENSSH PRIVATE KEY-----\n${noise(70, 12)}\n${noise(70, 13)}\n-----END OPENSSH PRIVATE KEY-----\n`
    for (const [path, body] of [
      ['/.aws/credentials', aws],
      ['/.docker/config.json', docker],
      ['/.kube/config', kube],
      ['/id_rsa', key],
    ] as const) {
      const r = exposedInfraFiles.run(withProbes({ [path]: probe(path, body) }))
      expect({ path, status: r.status, severity: r.severity }).toEqual({ path, status: 'fail', severity: 'critical' })
      expect(JSON.stringify(r)).not.toContain(PASSWORD)
    }
  })

  test('CI files by their own keys, an .htpasswd by its hash lines, Terraform state', () => {
    const gitlab = `stages:\n  - deploy\nvariables:\n  DEPLOY_TOKEN: "${PASSWORD}"\ndeploy:\n  stage: deploy\n  script:\n    - ./deploy.sh\n`
    const jenkins = "pipeline {\n  agent any\n  stages {\n    stage('Build') {\n      steps { sh 'make' }\n    }\n  }\n}\n"
    const htpasswd = `admin:$2y$05$${noise(53, 14, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789./')}\n`
    const state =
      '{\n  "version": 4,\n  "terraform_version": "1.6.2",\n  "resources": [{"type": "aws_db_instance", "instances": [{"attributes": {"password": "x"}}]}]\n}'
    const r = exposedInfraFiles.run(
      withProbes({
        '/.gitlab-ci.yml': probe('/.gitlab-ci.yml', gitlab),
        '/Jenkinsfile': probe('/Jenkinsfile', jenkins),
        '/.htpasswd': probe('/.htpasswd', htpasswd),
        '/terraform.tfstate': probe('/terraform.tfstate', state, 200, 'application/json'),
      }),
    )
    const files = r.evidence.files as Array<Record<string, unknown>>
    expect(files.map((f) => f.kind)).toEqual(['GitLab CI', 'Jenkinsfile', 'Terraform state', '.htpasswd'])
    expect(files[0]!.secretNames).toEqual(['DEPLOY_TOKEN'])
    expect(r.severity).toBe('critical')
    expect(JSON.stringify(r)).not.toContain(PASSWORD)
  })

  test('YAML that is not CI, prose about Dockerfiles and a README are no finding', () => {
    const r = exposedInfraFiles.run(
      withProbes({
        '/.gitlab-ci.yml': probe('/.gitlab-ci.yml', 'name: shop\nversion: 2\n'),
        '/Dockerfile': probe('/Dockerfile', 'A Dockerfile starts FROM a base image and then RUNs commands.'),
        '/.htpasswd': probe('/.htpasswd', 'admin:admin\n'),
        '/id_rsa': probe('/id_rsa', '-----BEGIN RSA PRIVATE KEY-----\n...your key here...\n-----END RSA PRIVATE KEY-----\n'),
      }),
    )
    expect(r.status).toBe('pass')
  })
})

describe('page-secrets', () => {
  const page = (inner: string) => `<!doctype html><html><head><title>Shop</title></head><body>${inner}</body></html>`

  test('a connection string and a password in HTML comments fail, redacted', () => {
    const html = page(
      `<!-- staging db: mysql://shop:${PASSWORD}@10.0.0.5/shop\n admin password: ${PASSWORD.slice(0, 10)}9 --><h1>Shop</h1>`,
    )
    const r = pageSecrets.run(makeArtifacts({ mainResponse: { body: html } }))
    expect(r.status).toBe('fail')
    expect(r.severity).toBe('critical')
    const kinds = (r.evidence.findings as Array<{ kind: string }>).map((f) => f.kind)
    expect(kinds).toEqual(expect.arrayContaining(['connection-string-password', 'credential-in-html-comment']))
    expect(JSON.stringify(r)).not.toContain(PASSWORD.slice(0, 10))
  })

  test('a private key in a hidden field fails critical', () => {
    const key = `-----BEGIN PRIVATE KEY-----\n${noise(64, 21)}\n${noise(64, 22)}\n-----END PRIVATE KEY-----`
    const r = pageSecrets.run(makeArtifacts({ mainResponse: { body: page(`<textarea hidden>${key}</textarea>`) } }))
    expect(r.severity).toBe('critical')
  })

  test('placeholders, example hosts, form labels and scripts (left to js-secrets) are not findings', () => {
    const html = page(
      '<!-- password: required, token: ${TOKEN}, api key: <your-key> -->' +
        '<p>Connect with postgres://user:password@localhost/db or https://admin:hunter2@example.com/</p>' +
        '<label>Password: <input type="password" name="password" value=""></label>' +
        `<script>var db = "postgres://app:${PASSWORD}@db.internal/app"</script>`,
    )
    const r = pageSecrets.run(makeArtifacts({ mainResponse: { body: html } }))
    expect(r.status).toBe('pass')
  })

  test('an unclosed comment and megabytes of markup are read once per pattern', () => {
    const html = `${'<!-- password: '.repeat(50_000)}${'<a href="https://a:b@'.repeat(50_000)}`
    const { scanned } = countRegexWork(() => pageSecrets.run(makeArtifacts({ mainResponse: { body: html } })))
    // Each of the check's patterns reads the page once (25 times in all), however many comments stay open.
    expect(scanned).toBeLessThanOrEqual(32 * html.length)
  })
})

describe('end-of-life-software', () => {
  test('PHP 7.4 in X-Powered-By and Django 3.2 on its debug page fail, with the end date and the upgrade', () => {
    const debug =
      '<table class="meta"><tr><th>Django Version:</th><td>3.2.25</td></tr><tr><th>Python Version:</th><td>3.11.2</td></tr></table>'
    const a = makeArtifacts({ mainResponse: { ...withHeaders({ 'x-powered-by': 'PHP/7.4.33' }), body: debug } })
    const r = endOfLifeSoftware.run(a)
    expect(r.status).toBe('fail')
    const eol = r.evidence.endOfLife as Array<Record<string, unknown>>
    expect(eol.map((e) => [e.product, e.version])).toEqual([
      ['PHP', '7.4.33'],
      ['Django', '3.2.25'],
    ])
    expect(eol[1]!.supportEnded).toBe('2026-04-30')
  })

  test('supported lines, banners without a version and other products pass', () => {
    const banners: Array<Record<string, string>> = [
      { server: 'Apache/2.4.71 (Debian)', 'x-powered-by': 'PHP/8.2.36' },
      { server: 'nginx/1.22.1' },
      { server: 'Werkzeug/2.2.2 Python/3.11.2' },
      { server: 'Microsoft-IIS/10.0', 'x-powered-by': 'ASP.NET' },
      { server: 'Apache' },
    ]
    for (const headers of banners) {
      expect(endOfLifeSoftware.run(makeArtifacts({ mainResponse: withHeaders(headers) })).status).toBe('pass')
    }
    for (const [header, value] of [
      ['server', 'Apache/2.2.34 (Unix) OpenSSL/1.0.2k-fips'],
      ['server', 'Microsoft-IIS/8.5'],
      ['server', 'Werkzeug/1.0.1 Python/3.8.10'],
    ] as const) {
      expect(endOfLifeSoftware.run(makeArtifacts({ mainResponse: withHeaders({ [header]: value }) })).status).toBe('fail')
    }
  })
})
