import { Type } from '@sinclair/typebox'
import { defineTool, readOnly } from './types.ts'
import { CheckStatusSchema, GradeSchema, SeveritySchema } from '../../../shared/report/schema.ts'
import { Nullable, strict, When } from './schemas.ts'

const ScanOrAuditId = (which: string) =>
  Type.String({
    minLength: 4,
    maxLength: 64,
    pattern: '^(scn|aud)_[0-9A-Za-z]+$',
    description: `The ${which}: a completed scan (scn_...) or audit (aud_...) of this account.`,
  })

const Side = Type.Object({
  id: Type.String(),
  kind: Type.Union([Type.Literal('scan'), Type.Literal('audit')]),
  score: Type.Integer(),
  grade: GradeSchema,
  createdAt: When('When the scan or audit was started'),
})

const Finding = Type.Object({
  fingerprint: Type.String(),
  checkId: Type.String(),
  title: Type.String(),
  severity: SeveritySchema,
  status: CheckStatusSchema,
  impact: Type.Number({ description: 'Score points this finding costs' }),
})

const Findings = (what: string) => Type.Array(Finding, { description: `${what}, highest impact first, at most 50.` })

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
  output: Type.Object({
    base: Side,
    head: Side,
    scoreDelta: Type.Integer({ description: 'head score minus base score' }),
    gradeChange: Type.Object({ from: GradeSchema, to: GradeSchema }),
    findings: Type.Object({
      new: Findings('In head, not in base'),
      fixed: Findings('In base, not in head'),
      unchanged: Findings('In both'),
    }),
    counts: Type.Object({ new: Type.Integer(), fixed: Type.Integer(), unchanged: Type.Integer() }),
    checksChanged: Type.Array(
      Type.Object({
        checkId: Type.String(),
        title: Type.String(),
        from: Nullable(CheckStatusSchema, 'null: the check was not part of base (another checks version)'),
        to: Nullable(CheckStatusSchema, 'null: the check is not part of head'),
      }),
    ),
    summary: Type.String({ description: 'One sentence to quote.' }),
  }),
  run: (input, ctx) => ctx.services.reports.compare(ctx.principal, input.baseScanId, input.headScanId),
})
