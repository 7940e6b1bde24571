import { Type } from '@sinclair/typebox'
import { defineTool, readOnly } from './types.ts'
import { strict } from './schemas.ts'

const ScanOrAuditId = (which: string) =>
  Type.String({
    maxLength: 64,
    pattern: '^(scn|aud)_[0-9A-Za-z]+$',
    description: `The ${which}.`,
  })

/** Each list of findings, highest impact first, at most 50. */
const Findings = Type.Array(Type.Unknown())

export const compareScans = defineTool({
  name: 'compare_scans',
  description:
    'Diff two scans or audits of one app (base, then head): findings new, fixed and unchanged, checks whose outcome changed, ' +
    'score delta, grade change, a one-sentence summary.',
  plan: 'launch',
  annotations: readOnly('Compare scans'),
  input: Type.Object({ baseScanId: ScanOrAuditId('earlier'), headScanId: ScanOrAuditId('later') }, strict),
  output: Type.Object(
    {
      base: Type.Object({}),
      head: Type.Object({}),
      scoreDelta: Type.Integer(),
      gradeChange: Type.Object({}),
      findings: Type.Object({ new: Findings, fixed: Findings, unchanged: Findings }),
      counts: Type.Object({}),
      checksChanged: Type.Array(Type.Unknown()),
      summary: Type.String(),
    },
    {
      description:
        'base, head: id, kind, score, grade, createdAt. findings: fingerprint, checkId, title, severity, status, impact; at most 50 ' +
        'a list. counts: new, fixed, unchanged. checksChanged: checkId, title, from, to.',
    },
  ),
  run: (input, ctx) => ctx.services.reports.compare(ctx.principal, input.baseScanId, input.headScanId),
})
