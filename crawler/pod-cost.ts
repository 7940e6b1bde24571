// On Kubernetes, a crawler marks its own pod with how much work it holds, as the annotation
// controller.kubernetes.io/pod-deletion-cost (jobs in flight x 1000), so that when KEDA scales the crawlers
// down the ReplicaSet removes idle pods before busy ones (an audit handed back costs its crawl so far).
// One PATCH (JSON merge patch) of its own pod through the Kubernetes API with the pod's service-account
// token; the Role of k8s/base allows nothing else. Outside Kubernetes (no POD_NAME) it does nothing.
// Changes are sent at most every MIN_GAP_MS, the last one always; a failed call is logged, never thrown, and
// tried again after RETRY_MS.
import { readFileSync } from 'node:fs'
import type { Logger } from '../shared/lib/log.ts'
import { errorMessage } from '../shared/errors.ts'

export const DELETION_COST_ANNOTATION = 'controller.kubernetes.io/pod-deletion-cost'
const MIN_GAP_MS = 2_000
const CALL_TIMEOUT_MS = 5_000
/** After a failed call, the next try. */
const RETRY_MS = 10_000
const SERVICE_ACCOUNT = '/var/run/secrets/kubernetes.io/serviceaccount'

export interface PodCostOptions {
  podName: string
  namespace: string
  /** The Kubernetes API (in a pod: https://kubernetes.default.svc). */
  apiUrl: string
  /** Where the service-account token and the cluster's CA are (tests point it elsewhere). */
  serviceAccountDir?: string
  log: Logger
}

export interface PodCost {
  /** The crawler's jobs in flight changed. */
  set(jobs: number): void
  /** Sends what is pending, then stops. */
  stop(): Promise<void>
}

const NOOP: PodCost = { set() {}, stop: async () => {} }

export function startPodCost(o: PodCostOptions | null): PodCost {
  if (!o?.podName || !o.namespace) return NOOP
  const dir = o.serviceAccountDir ?? SERVICE_ACCOUNT
  const read = (file: string) => {
    try {
      return readFileSync(`${dir}/${file}`, 'utf8').trim()
    } catch {
      return null
    }
  }
  const url = `${o.apiUrl.replace(/\/+$/, '')}/api/v1/namespaces/${encodeURIComponent(o.namespace)}/pods/${encodeURIComponent(o.podName)}`
  let wanted = 0
  let sent: number | null = null
  let timer: ReturnType<typeof setTimeout> | null = null
  let inFlight: Promise<void> = Promise.resolve()
  let lastAt = 0
  let stopped = false
  let retry: ReturnType<typeof setTimeout> | null = null

  const send = async () => {
    timer = null
    const cost = wanted
    if (cost === sent) return
    lastAt = Date.now()
    // Read each time: the kubelet rotates the token.
    const token = read('token')
    const ca = read('ca.crt')
    if (!token) {
      o.log.warn('pod deletion cost not set: no service account token', { dir })
      return
    }
    try {
      const res = await fetch(url, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/merge-patch+json', accept: 'application/json' },
        body: JSON.stringify({ metadata: { annotations: { [DELETION_COST_ANNOTATION]: String(cost) } } }),
        signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
        ...(ca ? { tls: { ca } } : {}),
      } as RequestInit)
      await res.body?.cancel()
      if (res.ok) sent = cost
      else o.log.warn('pod deletion cost not set', { status: res.status })
    } catch (e) {
      o.log.warn('pod deletion cost not set', { error: errorMessage(e) })
    }
    // Not set: tried again after a pause, so a busy pod does not stay marked idle until its work changes.
    if (sent !== wanted && !stopped) retry = setTimeout(schedule, RETRY_MS)
  }
  const schedule = () => {
    if (timer) return
    const wait = Math.max(0, MIN_GAP_MS - (Date.now() - lastAt))
    timer = setTimeout(() => {
      inFlight = inFlight.then(send)
    }, wait)
  }
  return {
    set(jobs: number) {
      wanted = Math.max(0, Math.round(jobs)) * 1000
      if (wanted !== sent) schedule()
    },
    async stop() {
      stopped = true
      if (retry) clearTimeout(retry)
      if (timer) {
        clearTimeout(timer)
        timer = null
        inFlight = inFlight.then(send)
      }
      await inFlight
    },
  }
}
