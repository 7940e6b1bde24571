import { Type } from '@sinclair/typebox'
import { PATCH_PLATFORMS } from '../../patches/builder.ts'
import { CREATE_PATCH_PLAN } from '../../patches/service.ts'
import { creates, defineTool } from './types.ts'
import { ErrorInfo, Id, Nullable, strict } from './schemas.ts'

// The patch as /api/patches/{id} shows it. What the builder reports (files, fixed, notFixed, notes) and the
// pull request are described, not closed: more fields may appear.
const PatchOutput = Type.Object(
  {
    patchId: Type.String(),
    status: Type.Union(['queued', 'running', 'ready', 'pr_opened', 'failed'].map((s) => Type.Literal(s))),
    source: Type.String(),
    platform: Type.String(),
    diff: Nullable(Type.String(), 'Unified diff; null until built.'),
    error: Type.Optional(ErrorInfo),
    watch: Type.String(),
    createdAt: Type.String(),
    updatedAt: Type.String(),
  },
  { description: 'Once built also files (path, change), fixed and notFixed (checkId, why), notes; branch, pullRequest (number, url).' },
)

export const createPatch = defineTool({
  name: 'create_patch',
  description:
    "Config fixes for a completed scan's or audit's findings (headers, a CSP from what the page loaded, cookies, https redirect) " +
    'as a unified diff for the platform, with what config cannot fix; a pull request if a repository is connected. Waits up ' +
    'to 45 s; then follow watch.',
  plan: CREATE_PATCH_PLAN,
  annotations: creates('Create a patch'),
  input: Type.Object(
    {
      scanId: Type.Optional(Id('scn')),
      auditId: Type.Optional(Id('aud')),
      platform: Type.Optional(
        Type.Union(
          PATCH_PLATFORMS.map((s) => Type.Literal(s)),
          { description: 'Default: from the repository, else detected.' },
        ),
      ),
      repository: Type.Optional(Type.Boolean({ description: 'false: the diff only, no pull request.' })),
    },
    strict,
  ),
  output: PatchOutput,
  run: (input, ctx) => ctx.services.patches.create(ctx.principal, input),
})
