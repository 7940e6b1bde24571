// One request with a foreign Origin, to see whether the target reflects it (and with credentials).
import type { CorsProbeArtifact } from '../../shared/checks/types.ts'
import type { EgressProxy } from '../../shared/egress/proxy.ts'
import { fetchOnce } from './http-chain.ts'

/** The unrelated origin the CORS probe claims to come from. */
export const CORS_PROBE_ORIGIN = 'https://appaudit-cors-probe.example'

export async function corsProbe(url: string, proxy: EgressProxy, timeoutMs: number): Promise<CorsProbeArtifact> {
  const got = await fetchOnce(url, proxy, timeoutMs, 1024, { origin: CORS_PROBE_ORIGIN })
  if (!got.ok) return { url, origin: CORS_PROBE_ORIGIN, status: 0, headers: {}, error: `${got.code}: ${got.reason}` }
  return { url, origin: CORS_PROBE_ORIGIN, status: got.res.status, headers: got.res.headers, error: null }
}
