// A crawler on Kubernetes marks its pod's deletion cost with the jobs it holds, through the Kubernetes API's
// documented wire format (PATCH of the pod, a JSON merge patch, the service account's bearer token), here
// against a local stand-in of that API: a real crawler, real PostgreSQL, Redis and Chromium, a real scan.
import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DELETION_COST_ANNOTATION, startPodCost } from '../../crawler/pod-cost.ts'
import { createLogger } from '../../shared/lib/log.ts'
import { connectClient, ok } from '../harness/client.ts'
import { startService, type TestService } from '../harness/service.ts'
import { until } from '../harness/wait.ts'
import { weakSite } from '../fixtures/sites.ts'

interface Call {
  method: string
  path: string
  contentType: string | null
  authorization: string | null
  body: any
}

function kubernetesApi(status = 200) {
  const calls: Call[] = []
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const url = new URL(req.url)
      calls.push({
        method: req.method,
        path: url.pathname,
        contentType: req.headers.get('content-type'),
        authorization: req.headers.get('authorization'),
        body: await req.json().catch(() => null),
      })
      return Response.json({ kind: 'Pod', apiVersion: 'v1', metadata: { name: url.pathname.split('/').at(-1) } }, { status })
    },
  })
  return { url: `http://127.0.0.1:${server.port}`, calls, stop: () => server.stop(true) }
}

const dirs: string[] = []
function serviceAccount(token: string) {
  const dir = mkdtempSync(join(tmpdir(), 'sa-'))
  dirs.push(dir)
  writeFileSync(join(dir, 'token'), `${token}\n`)
  return dir
}
const started: TestService[] = []
afterAll(async () => {
  for (const s of started) await s.stop().catch(() => {})
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
}, 60_000)

const costs = (calls: Call[]) => calls.map((c) => c.body?.metadata?.annotations?.[DELETION_COST_ANNOTATION])

describe('pod deletion cost', () => {
  test('a crawler marks its pod busy while it scans and idle after, with the wire format of the Kubernetes API', async () => {
    const api = kubernetesApi()
    const site = await weakSite()
    const svc = await startService('production', {
      ROLE: 'all',
      POD_NAME: 'appaudit-crawler-7d9f-abcde',
      POD_NAMESPACE: 'appaudit',
      K8S_API_URL: api.url,
      K8S_SERVICE_ACCOUNT_DIR: serviceAccount('sa-token-1'),
    })
    started.push(svc)
    const client = await connectClient(svc.mcpUrl, await svc.key('free'))
    await ok(client, 'scan_app', { url: site.url })
    await until(() => costs(api.calls).at(-1) === '0', 15_000, 'the pod marked idle again')
    expect(costs(api.calls)).toContain('1000')
    for (const c of api.calls) {
      expect(c).toMatchObject({
        method: 'PATCH',
        path: '/api/v1/namespaces/appaudit/pods/appaudit-crawler-7d9f-abcde',
        contentType: 'application/merge-patch+json',
        authorization: 'Bearer sa-token-1',
      })
      expect(Object.keys(c.body)).toEqual(['metadata'])
    }
    await client.close()
    await site.stop()
    api.stop()
  }, 90_000)

  test('changes close together are sent as one; a refused call is logged, never thrown; off Kubernetes nothing is sent', async () => {
    const api = kubernetesApi()
    const log = createLogger('error')
    const cost = startPodCost({ podName: 'p', namespace: 'n', apiUrl: api.url, serviceAccountDir: serviceAccount('t'), log })
    cost.set(1)
    await until(() => api.calls.length === 1, 5_000, 'the first change')
    for (let i = 2; i < 10; i++) cost.set(i)
    cost.set(3)
    await until(() => api.calls.length === 2, 5_000, 'the changes since, as one call')
    expect(costs(api.calls)).toEqual(['1000', '3000'])
    await cost.stop()
    api.stop()

    const refusing = kubernetesApi(403)
    const denied = startPodCost({ podName: 'p', namespace: 'n', apiUrl: refusing.url, serviceAccountDir: serviceAccount('t'), log })
    denied.set(2)
    await until(() => refusing.calls.length === 1, 5_000, 'the refused call')
    await denied.stop()
    refusing.stop()

    const outside = startPodCost(null)
    outside.set(5)
    await outside.stop()
  }, 30_000)
})
