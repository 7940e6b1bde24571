// Builds a configuration patch from a scan's or audit's findings: the response headers, the CSP (computed
// from what the page loaded), cookie attributes where the platform's configuration sets them, the http to
// https redirect and version disclosure, written into the file each platform reads. Pure: it sees the
// repository through `RepoView` (or nothing: then it writes new files in the platform's usual places) and
// returns whole-file edits plus what configuration cannot fix and why. diff.ts turns the edits into a
// unified diff.
//
// The builder picks the platform's writer (platforms/<platform>.ts, each a `PlatformWriter`) and hands it the
// findings sorted by wanted.ts and a `Plan` (plan.ts, which also holds the rules that keep anything from the
// scanned site or the repository from reaching a file unchecked).
import { cloudflare } from './platforms/cloudflare.ts'
import { apache } from './platforms/apache.ts'
import { express } from './platforms/express.ts'
import { netlify } from './platforms/netlify.ts'
import { NEXT_CONFIGS, nextjs } from './platforms/nextjs.ts'
import { nginx } from './platforms/nginx.ts'
import { vercel } from './platforms/vercel.ts'
import { type Fixed, type FileEdit, type NotFixed, Plan, type PatchSource, type PlatformWriter, type RepoView } from './plan.ts'
import { wanted } from './wanted.ts'

export type { FileEdit, Fixed, NotFixed, PatchFinding, PatchSource, RepoView } from './plan.ts'
export { isSafeHeaderValue, isSafePath } from './plan.ts'

export const PATCH_PLATFORMS = ['vercel', 'netlify', 'nextjs', 'nginx', 'apache', 'cloudflare', 'express'] as const
export type PatchPlatform = (typeof PATCH_PLATFORMS)[number]

export interface PatchPlan {
  platform: PatchPlatform
  edits: FileEdit[]
  fixed: Fixed[]
  notFixed: NotFixed[]
  notes: string[]
}

const EMPTY_REPO: RepoView = { paths: [], read: () => null }

const WRITERS: Record<PatchPlatform, PlatformWriter> = { vercel, netlify, nextjs, nginx, apache, cloudflare, express }

export function buildPatch(platform: PatchPlatform, src: PatchSource, repo: RepoView = EMPTY_REPO): PatchPlan {
  const plan = new Plan(repo, src.url)
  const w = wanted(src, plan.notFixed, plan.notes)
  WRITERS[platform](plan, w)
  return {
    platform,
    edits: [...plan.edits.values()].filter((e) => e.before !== e.after),
    fixed: plan.fixed,
    notFixed: plan.notFixed,
    notes: [...new Set(plan.notes)],
  }
}

/** The platform a repository's files point at, or null. */
export function platformFromRepo(repo: RepoView): PatchPlatform | null {
  const has = (p: string) => repo.paths.includes(p)
  if (NEXT_CONFIGS.some(has)) return 'nextjs'
  if (has('vercel.json')) return 'vercel'
  if (has('netlify.toml')) return 'netlify'
  if (has('wrangler.toml') || has('wrangler.json') || has('wrangler.jsonc')) return 'cloudflare'
  if (repo.paths.some((p) => /(?:^|\/)\.htaccess$/.test(p))) return 'apache'
  if (repo.paths.some((p) => /(?:^|\/)nginx\.conf$|(?:^|\/)(?:conf\.d|sites-available|nginx)\/[\w.-]+\.conf$/.test(p))) return 'nginx'
  if (has('_headers') || has('public/_headers')) return 'netlify'
  const pkg = repo.read('package.json')
  if (pkg && /"express"\s*:/.test(pkg)) return 'express'
  return null
}

/** The patch platform for a detected hosting platform (shared/report/platform.ts), or null for generic. */
export function patchPlatformFor(detected: string): PatchPlatform | null {
  return (PATCH_PLATFORMS as readonly string[]).includes(detected) ? (detected as PatchPlatform) : null
}
