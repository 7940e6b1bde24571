import { Type } from '@sinclair/typebox'
import { defineTool, readOnly } from './types.ts'
import { strict } from './schemas.ts'

const ScanOrAuditId = (which: string) =>
  Type.String({
    minLength: 4,
    maxLength: 64,
    pattern: '^(scn|aud)_[0-9A-Za-z]+$',
    description: `The ${which}: a completed scan (scn_...) or audit (aud_...) of this account.`,
  })

export const compareScans = defineTool({
  name: 'compare_scans',
  description:
    'Diff two scans or audits of the same app (base, then head): findings keyed by fingerprint as new, fixed and unchanged ' +
    '(each list highest impact first, at most 50, with counts), the checks whose outcome changed, the score delta, the grade change and ' +
    'a one-sentence summary to quote. Returns {base, head, scoreDelta, gradeChange, findings: {new, fixed, unchanged}, counts, ' +
    'checksChanged, summary}.',
  plan: 'launch',
  annotations: readOnly('Compare scans'),
  input: Type.Object({ baseScanId: ScanOrAuditId('earlier scan or audit'), headScanId: ScanOrAuditId('later scan or audit') }, strict),
  run: (input, ctx) => ctx.services.reports.compare(ctx.principal, input.baseScanId, input.headScanId),
})
