import { Type } from '@sinclair/typebox'
import { EXPORT_FORMATS } from '../../../shared/report/export/types.ts'
import { defineTool, readOnly } from './types.ts'
import { Id, strict } from './schemas.ts'

export const exportReport = defineTool({
  name: 'export_report',
  description:
    'Export a completed scan or audit as SARIF 2.1.0, JUnit XML, Markdown or HTML. The export is in content up to 12 KB; a larger ' +
    'one is at url (no credential needed, keep it private) until expiresAt.',
  plan: 'launch',
  annotations: readOnly('Export a report'),
  input: Type.Object(
    {
      scanId: Type.Optional(Id('scn')),
      auditId: Type.Optional(Id('aud')),
      format: Type.Union(EXPORT_FORMATS.map((f) => Type.Literal(f))),
    },
    strict,
  ),
  output: Type.Object({
    format: Type.Union(EXPORT_FORMATS.map((f) => Type.Literal(f))),
    mediaType: Type.String(),
    filename: Type.String(),
    bytes: Type.Integer(),
    content: Type.Optional(Type.String()),
    url: Type.Optional(Type.String()),
    expiresAt: Type.Optional(Type.String()),
  }),
  run: (input, ctx) => ctx.services.reports.export(ctx.principal, input),
})
