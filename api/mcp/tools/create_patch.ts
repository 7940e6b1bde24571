import { Type } from '@sinclair/typebox'
import { PATCH_PLATFORMS } from '../../patches/builder.ts'
import { CREATE_PATCH_PLAN } from '../../patches/service.ts'
import { creates, defineTool } from './types.ts'
import { ErrorInfo, Id, Nullable, strict, When } from './schemas.ts'

// The patch as /api/patches/{id} shows it. What the builder reports (files, fixed, notFixed, notes) is
// described, not closed: more fields may appear.
const PatchOutput = Type.Object({
  patchId: Type.String(),
  status: Type.Union(['queued', 'running', 'ready', 'pr_opened', 'failed'].map((s) => Type.Literal(s))),
  source: Type.String({ description: 'The scan or audit id the patch fixes.' }),
  platform: Type.String(),
  diff: Nullable(Type.String(), 'The unified diff (git apply accepts it); null until built.'),
  files: Type.Optional(Type.Array(Type.Object({ path: Type.String(), change: Type.String() }))),
  fixed: Type.Optional(Type.Array(Type.Object({ checkId: Type.String() }))),
  notFixed: Type.Optional(Type.Array(Type.Object({ checkId: Type.String() }))),
  notes: Type.Optional(Type.Array(Type.String())),
  branch: Type.Optional(Type.String()),
  pullRequest: Type.Optional(Type.Object({ number: Type.Integer(), url: Type.String() })),
  error: Type.Optional(ErrorInfo),
  watch: Type.String({ description: 'GET it to follow the patch.' }),
  createdAt: When('When the patch was requested'),
  updatedAt: When('When it last changed'),
})

export const createPatch = defineTool({
  name: 'create_patch',
  description:
    "Write the configuration fixes for a completed scan's or audit's findings (security headers, a CSP computed from what the page " +
    'loaded, cookie attributes where the platform sets them, the http-to-https redirect, version disclosure) as a unified diff for ' +
    'the platform: vercel.json, netlify.toml/_headers, next.config headers(), nginx, Apache .htaccess, Cloudflare _headers, or ' +
    'Express middleware. Lists what configuration cannot fix and why. With a repository connected in the dashboard, pushes a ' +
    'branch and opens a pull request. Waits up to 45 s; status is queued, running, ready, pr_opened or failed, also at watch.',
  plan: CREATE_PATCH_PLAN,
  annotations: creates('Create a patch'),
  input: Type.Object(
    {
      scanId: Type.Optional(Id('scan', 'scn')),
      auditId: Type.Optional(Id('audit', 'aud')),
      platform: Type.Optional(
        Type.Union(
          PATCH_PLATFORMS.map((s) => Type.Literal(s)),
          { description: "Where the fix goes. Default: what the connected repository's files show, else what the scan detected." },
        ),
      ),
      repository: Type.Optional(
        Type.Boolean({ description: 'false: only build the diff, even when a repository is connected. Default true.' }),
      ),
    },
    strict,
  ),
  output: PatchOutput,
  run: (input, ctx) => ctx.services.patches.create(ctx.principal, input),
})
