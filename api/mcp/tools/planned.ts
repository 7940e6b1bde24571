// Tools that are listed with their final input schemas but not built yet. Each answers not_implemented
// until it moves into a file of its own with a run function.
import { Type } from '@sinclair/typebox'
import { creates, defineTool } from './types.ts'
import { Id, strict, Url } from './schemas.ts'

export const createPatch = defineTool({
  name: 'create_patch',
  description:
    "Write a fix for the app's hosting config (vercel.json, netlify.toml/_headers, next.config, nginx) and open a pull request when a " +
    'repository is connected.',
  plan: 'scale',
  annotations: creates('Create a patch'),
  input: Type.Object(
    {
      scanId: Id('scan', 'scn'),
      platform: Type.Optional(Type.Union(['vercel', 'netlify', 'nextjs', 'nginx'].map((s) => Type.Literal(s)))),
    },
    strict,
  ),
})

export const startDirectoryRun = defineTool({
  name: 'start_directory_run',
  description: 'Audit a list of apps in one run.',
  plan: 'scale',
  annotations: creates('Audit a list of apps'),
  input: Type.Object({ urls: Type.Array(Url, { minItems: 1, maxItems: 500 }) }, strict),
})

export const auditAuthenticated = defineTool({
  name: 'audit_authenticated',
  description: 'Whole-site audit behind a login, with cookies or headers you supply. They are encrypted at rest and wiped after the run.',
  plan: 'scale',
  annotations: creates('Audit behind a login'),
  input: Type.Object(
    {
      url: Url,
      cookies: Type.Optional(
        Type.Array(
          Type.Object(
            {
              name: Type.String({ minLength: 1, maxLength: 256 }),
              value: Type.String({ maxLength: 4096 }),
              domain: Type.Optional(Type.String({ maxLength: 253 })),
            },
            strict,
          ),
          { maxItems: 50 },
        ),
      ),
      headers: Type.Optional(Type.Record(Type.String({ maxLength: 128 }), Type.String({ maxLength: 4096 }))),
    },
    strict,
  ),
})
