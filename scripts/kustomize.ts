// Renders a kustomization of k8s/ the way `kustomize build` does, for the subset these manifests use, so
// they can be rendered and checked where no kustomize binary is installed (the tests, this machine):
// resources (files, and directories with a kustomization), namespace, labels (pairs, on pod templates too
// with includeTemplates, never on selectors),
// images (newName, newTag) and patches (strategic merge from a file, matched by kind and name; lists of
// named items, such as containers, merged by name). Anything else in a kustomization is refused, never
// ignored. `kustomize build` itself renders the same files the same way.
//
//   bun scripts/kustomize.ts k8s/overlays/prod > prod.yaml
import { readFileSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { parseAllDocuments, stringify } from 'yaml'

export type Manifest = {
  apiVersion: string
  kind: string
  metadata: { name: string; namespace?: string; labels?: Record<string, string> }
} & Record<string, unknown>

interface Kustomization {
  apiVersion?: string
  kind?: string
  namespace?: string
  resources?: string[]
  labels?: Array<{ pairs: Record<string, string>; includeSelectors?: boolean; includeTemplates?: boolean }>
  images?: Array<{ name: string; newName?: string; newTag?: string }>
  patches?: Array<{ path: string }>
}

const KNOWN = new Set(['apiVersion', 'kind', 'namespace', 'resources', 'labels', 'images', 'patches'])
/** Kinds that live in no namespace (of those these manifests could hold). */
const CLUSTER_SCOPED = new Set([
  'Namespace',
  'ClusterRole',
  'ClusterRoleBinding',
  'CustomResourceDefinition',
  'GatewayClass',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
])

function readDocs(file: string): Manifest[] {
  return parseAllDocuments(readFileSync(file, 'utf8'))
    .map((d) => {
      if (d.errors.length) throw new Error(`${file}: ${d.errors[0]!.message}`)
      return d.toJS() as Manifest | null
    })
    .filter((d): d is Manifest => d !== null)
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** Strategic merge: maps deep-merged, lists of items with a name merged by name, other lists replaced. */
function merge(base: unknown, patch: unknown): unknown {
  if (isObject(base) && isObject(patch)) {
    const out: Record<string, unknown> = { ...base }
    for (const [k, v] of Object.entries(patch)) out[k] = k in base ? merge(base[k], v) : v
    return out
  }
  if (Array.isArray(base) && Array.isArray(patch) && patch.every((p) => isObject(p) && typeof p.name === 'string')) {
    const out = [...base]
    for (const p of patch as Array<Record<string, unknown>>) {
      const i = out.findIndex((b) => isObject(b) && b.name === p.name)
      if (i >= 0) out[i] = merge(out[i], p)
      else out.push(p)
    }
    return out
  }
  return patch
}

/** Every container list of a manifest's pod template (Deployment, Job, CronJob). */
function podSpecs(m: Manifest): Array<Record<string, unknown>> {
  const spec = m.spec as Record<string, any> | undefined
  if (!spec) return []
  if (spec.template?.spec) return [spec.template.spec]
  if (spec.jobTemplate?.spec?.template?.spec) return [spec.jobTemplate.spec.template.spec]
  return []
}

export function render(dir: string): Manifest[] {
  const file = join(dir, 'kustomization.yaml')
  const k = readDocs(file)[0] as unknown as Kustomization
  const unknown = Object.keys(k).filter((key) => !KNOWN.has(key))
  if (unknown.length) throw new Error(`${file}: not supported here: ${unknown.join(', ')}`)
  let docs: Manifest[] = []
  for (const r of k.resources ?? []) {
    const path = resolve(dir, r)
    docs.push(...(statSync(path).isDirectory() ? render(path) : readDocs(path)))
  }
  for (const p of k.patches ?? []) {
    for (const patch of readDocs(resolve(dir, p.path))) {
      const i = docs.findIndex((d) => d.kind === patch.kind && d.metadata.name === patch.metadata.name)
      if (i < 0) throw new Error(`${p.path}: no ${patch.kind} ${patch.metadata.name} to patch`)
      docs[i] = merge(docs[i], patch) as Manifest
    }
  }
  for (const img of k.images ?? []) {
    for (const m of docs) {
      for (const spec of podSpecs(m)) {
        for (const c of [...((spec.containers as any[]) ?? []), ...((spec.initContainers as any[]) ?? [])]) {
          const [name, tag] = String(c.image).split(/:(?=[^/]*$)/)
          if (name !== img.name) continue
          c.image = `${img.newName ?? name}:${img.newTag ?? tag ?? 'latest'}`
        }
      }
    }
  }
  for (const l of k.labels ?? []) {
    if (l.includeSelectors) throw new Error(`${file}: labels with includeSelectors are not supported here`)
    for (const m of docs) {
      m.metadata.labels = { ...(m.metadata.labels ?? {}), ...l.pairs }
      if (!l.includeTemplates) continue
      const spec = m.spec as Record<string, any> | undefined
      for (const t of [spec?.template, spec?.jobTemplate?.spec?.template]) {
        if (t) t.metadata = { ...(t.metadata ?? {}), labels: { ...(t.metadata?.labels ?? {}), ...l.pairs } }
      }
    }
  }
  if (k.namespace) {
    const ns = k.namespace
    docs = docs.map((m) => {
      if (CLUSTER_SCOPED.has(m.kind)) return m
      const out = { ...m, metadata: { ...m.metadata, namespace: ns } } as Manifest
      if (m.kind === 'RoleBinding') {
        out.subjects = (m.subjects as Array<Record<string, unknown>>).map((s) =>
          s.kind === 'ServiceAccount' ? { ...s, namespace: ns } : s,
        )
      }
      return out
    })
  }
  return docs
}

if (import.meta.main) {
  const dir = process.argv[2]
  if (!dir) {
    console.error('usage: bun scripts/kustomize.ts DIR (a directory with a kustomization.yaml)')
    process.exit(2)
  }
  process.stdout.write(
    render(resolve(dir))
      .map((d) => stringify(d))
      .join('---\n'),
  )
}
