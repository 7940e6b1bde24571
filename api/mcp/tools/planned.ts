// Tools that are listed with their final input schemas but not built yet. Each answers not_implemented
// until it moves into a file of its own with a run function.
import { Type } from '@sinclair/typebox'
import { creates, defineTool, readOnly } from './types.ts'
import { Id, strict, Url } from './schemas.ts'

export const compareScans = defineTool({
  name: 'compare_scans',
  description: 'Diff two scans or audits: new, fixed and unchanged findings and the score delta.',
  plan: 'launch',
  annotations: readOnly('Compare scans'),
  input: Type.Object(
    { baseId: Type.String({ minLength: 4, maxLength: 64 }), headId: Type.String({ minLength: 4, maxLength: 64 }) },
    strict,
  ),
})

export const exportReport = defineTool({
  name: 'export_report',
  description: 'Export a scan or audit as SARIF 2.1.0 (GitHub code scanning), JUnit XML, Markdown or HTML.',
  plan: 'launch',
  annotations: readOnly('Export a report'),
  input: Type.Object(
    {
      id: Type.String({ minLength: 4, maxLength: 64, description: 'A scan or audit id.' }),
      format: Type.Union([Type.Literal('sarif'), Type.Literal('junit'), Type.Literal('markdown'), Type.Literal('html')]),
    },
    strict,
  ),
})

export const monitorApp = defineTool({
  name: 'monitor_app',
  description: 'Scan an app on a schedule and record regressions.',
  plan: 'launch',
  annotations: { ...creates('Monitor an app'), idempotentHint: true },
  input: Type.Object(
    {
      url: Url,
      interval: Type.Optional(Type.Union([Type.Literal('daily'), Type.Literal('weekly')])),
      enabled: Type.Optional(Type.Boolean({ description: 'false stops monitoring.' })),
    },
    strict,
  ),
})

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
