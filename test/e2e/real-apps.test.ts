// The fast subset of the real-applications bench (bench/real-apps/): one scan_app of a real WordPress from
// Debian's package, served by an Apache instance of its own with Debian's defaults (apps.sh), and the
// documented weaknesses of that default install we find, WordPress's own paths among them. Runs only where bench/real-apps/install.sh has
// installed WordPress (package, database, site config); skipped elsewhere, and the skip says so.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { connectClient, payload } from '../harness/client.ts'
import { machineDeadline } from '../harness/machine.ts'
import { startService, type TestService } from '../harness/service.ts'

const APPS_SH = join(import.meta.dir, '../../bench/real-apps/apps.sh')
const NEEDED = ['/usr/sbin/apache2', '/usr/share/wordpress/wp-config.php', '/etc/wordpress/config-127.0.0.1.php']

async function mariadbUp(): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port: 3306 })
    const done = (ok: boolean) => {
      s.destroy()
      resolve(ok)
    }
    s.once('connect', () => done(true))
    s.once('error', () => done(false))
    s.setTimeout(2_000, () => done(false))
  })
}

const missing = NEEDED.filter((f) => !existsSync(f))
const why = missing.length
  ? `not installed here (${missing.join(', ')} missing)`
  : (await mariadbUp())
    ? ''
    : 'no MariaDB on 127.0.0.1:3306'

interface Check {
  id: string
  status: string
  summary: string
  evidence: Record<string, unknown>
}

describe.skipIf(why !== '')(
  `real WordPress from Debian's package (skipped unless bench/real-apps/install.sh ran${why ? `: ${why}` : ''})`,
  () => {
    const dir = mkdtempSync(join(tmpdir(), 'appaudit-realapps-test-'))
    const env = { ...process.env, BUN: process.execPath, REALAPPS_DIR: dir, REALAPPS_APPS: 'wordpress', REALAPPS_NO_NGINX: '1' }
    let svc: TestService
    let client: Client
    let url = ''

    beforeAll(async () => {
      const started = Bun.spawnSync(['bash', APPS_SH, 'start'], { env, stdout: 'pipe', stderr: 'pipe' })
      if (started.exitCode !== 0) throw new Error(`apps.sh start failed: ${started.stderr.toString().slice(0, 500)}`)
      url = (JSON.parse(readFileSync(join(dir, 'state.json'), 'utf8')) as Record<string, { default: string }>).wordpress!.default
      svc = await startService('embedded')
      client = await connectClient(svc.mcpUrl, await svc.key('free'))
    }, machineDeadline(120_000))

    afterAll(async () => {
      await client?.close().catch(() => {})
      await svc?.stop()
      Bun.spawnSync(['bash', APPS_SH, 'stop'], { env })
      rmSync(dir, { recursive: true, force: true })
    })

    test(
      'scan_app finds the directory listing of /wp-includes/, the WordPress and Apache versions and the frameable page',
      async () => {
        const r = await client.callTool({ name: 'scan_app', arguments: { url } }, undefined, { timeout: machineDeadline(90_000) })
        const body = payload(r) as { checks: Check[] }
        expect(r.isError ? JSON.stringify(body).slice(0, 400) : null).toBeNull()
        const found = (id: string) => body.checks.find((c) => c.id === id && (c.status === 'fail' || c.status === 'warn'))
        const text = (c: Check | undefined) => `${c?.summary} ${JSON.stringify(c?.evidence)}`
        expect(text(found('directory-listing'))).toContain('/wp-includes/')
        expect(text(found('version-disclosure'))).toMatch(/WordPress 6\./)
        expect(text(found('version-disclosure'))).toMatch(/Apache\/2\.4/)
        expect(found('frame-protection')).toBeDefined()
        // WordPress's own surface, read from the whole report (the compact answer shortens evidence): the
        // readme, XML-RPC, the REST user list and the author archive, each by its URL under the WordPress root.
        const scanId = (body as { id?: string }).id
        const got = await client.callTool({ name: 'get_scan', arguments: { scanId, detail: 'full' } }, undefined, {
          timeout: machineDeadline(30_000),
        })
        expect(got.isError ? JSON.stringify(payload(got)).slice(0, 400) : null).toBeNull()
        const full = (payload(got) as { report: { checks: Check[]; probes?: { apps?: { wordpress: number } } } }).report
        const wp = full.checks.find((c) => c.id === 'web-app-exposure')
        expect(wp?.status).toBe('fail')
        const evidence = JSON.stringify(wp?.evidence)
        for (const path of [/\/readme\.html"/, /\/xmlrpc\.php"/, /wp\/v2\/users"/, /[?&]author=1"/]) expect(evidence).toMatch(path)
        // Counts and masked slugs only: the admin's e-mail address never reaches the report.
        expect(evidence).not.toMatch(/@[a-z0-9.-]+\.[a-z]{2,}/i)
        expect(full.probes?.apps?.wordpress).toBeGreaterThanOrEqual(4)
      },
      machineDeadline(120_000),
    )
  },
)
