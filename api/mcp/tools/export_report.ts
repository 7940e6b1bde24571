import { Type } from '@sinclair/typebox'
import { EXPORT_FORMATS } from '../../../shared/report/export/types.ts'
import { defineTool, readOnly } from './types.ts'
import { Id, strict } from './schemas.ts'

export const exportReport = defineTool({
  name: 'export_report',
  description:
    'Export a completed scan or audit (exactly one of scanId and auditId) as SARIF 2.1.0 (GitHub code scanning), JUnit XML (CI test ' +
    'reports), Markdown (a pull-request comment) or HTML (a standalone page). Returns {format, mediaType, filename, bytes} with the ' +
    'export in content when it is at most 12 KB; a larger one is at url for an hour (until expiresAt), a plain GET that needs no ' +
    'credential, so keep the link private.',
  plan: 'launch',
  annotations: readOnly('Export a report'),
  input: Type.Object(
    {
      scanId: Type.Optional(Id('scan', 'scn')),
      auditId: Type.Optional(Id('audit', 'aud')),
      format: Type.Union(
        EXPORT_FORMATS.map((f) => Type.Literal(f)),
        { description: 'sarif, junit, markdown or html.' },
      ),
    },
    strict,
  ),
  output: Type.Object({
    format: Type.Union(EXPORT_FORMATS.map((f) => Type.Literal(f))),
    mediaType: Type.String(),
    filename: Type.String(),
    bytes: Type.Integer({ description: 'Size of the export in UTF-8 bytes.' }),
    content: Type.Optional(Type.String({ description: 'The export itself, when it is at most 12 KB.' })),
    url: Type.Optional(Type.String({ description: 'A larger export: a plain GET that needs no credential, until expiresAt.' })),
    expiresAt: Type.Optional(Type.String({ description: 'When url stops working (ISO 8601, UTC).' })),
  }),
  run: (input, ctx) => ctx.services.reports.export(ctx.principal, input),
})
