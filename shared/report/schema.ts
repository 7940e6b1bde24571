// TypeBox schemas of a check result and a report; the TypeScript types derive from them so they cannot drift.

import { Type, type Static } from '@sinclair/typebox'
import type { Category, CheckStatus, Severity } from '../checks/types.ts'
import type { Grade } from './scoring.ts'

export const SeveritySchema = Type.Union([
  Type.Literal('critical'),
  Type.Literal('high'),
  Type.Literal('medium'),
  Type.Literal('low'),
  Type.Literal('info'),
])

export const CheckStatusSchema = Type.Union([
  Type.Literal('pass'),
  Type.Literal('fail'),
  Type.Literal('warn'),
  Type.Literal('info'),
  Type.Literal('skipped'),
  Type.Literal('error'),
])

export const CategorySchema = Type.Union([
  Type.Literal('security'),
  Type.Literal('https'),
  Type.Literal('cookies'),
  Type.Literal('exposure'),
  Type.Literal('secrets'),
  Type.Literal('seo'),
  Type.Literal('performance'),
  Type.Literal('accessibility'),
  Type.Literal('privacy'),
])

export const GradeSchema = Type.Union(
  (['A+', 'A', 'A-', 'B+', 'B', 'B-', 'C+', 'C', 'C-', 'D+', 'D', 'D-', 'F'] as const).map((g) => Type.Literal(g)),
)

/** What runChecks returns for one check. */
export const CheckResultSchema = Type.Object({
  id: Type.String({ description: 'Stable kebab-case check id' }),
  title: Type.String(),
  category: CategorySchema,
  severity: SeveritySchema,
  status: CheckStatusSchema,
  summary: Type.String({ description: 'One sentence on what was found' }),
  evidence: Type.Record(Type.String(), Type.Unknown(), { description: 'Specific proof, redacted' }),
})

export const ReportCheckSchema = Type.Composite([
  CheckResultSchema,
  Type.Object({
    advice: Type.Union([Type.String(), Type.Null()], { description: 'How to fix, for fail and warn; null otherwise' }),
  }),
])

export const AdviceSchema = Type.Object({
  checkId: Type.String(),
  title: Type.String(),
  severity: SeveritySchema,
  status: Type.Union([Type.Literal('fail'), Type.Literal('warn')]),
  impact: Type.Number({ description: 'Score points this finding costs' }),
  advice: Type.String(),
})

export const ReportSummarySchema = Type.Object({
  pass: Type.Integer(),
  fail: Type.Integer(),
  warn: Type.Integer(),
  info: Type.Integer(),
  skipped: Type.Integer(),
  error: Type.Integer(),
})

/** The fields that head every report, whole or compact: what was scanned, its score and its counts. */
export const REPORT_HEAD = {
  id: Type.String(),
  url: Type.String(),
  finalUrl: Type.String(),
  score: Type.Integer({ minimum: 0, maximum: 100 }),
  grade: GradeSchema,
  checksVersion: Type.String(),
  summary: ReportSummarySchema,
}

export const ReportSchema = Type.Object({
  ...REPORT_HEAD,
  checks: Type.Array(ReportCheckSchema),
  advice: Type.Array(AdviceSchema, { description: 'Fail and warn only, highest impact first' }),
  timings: Type.Record(Type.String(), Type.Number(), { description: 'Milliseconds per phase' }),
  probes: Type.Optional(
    Type.Object(
      {
        budget: Type.Integer({ description: 'Requests a scan makes at most for probes (paths, source maps, API and known applications)' }),
        sent: Type.Integer({ description: 'Probe requests this scan made' }),
        concurrency: Type.Integer({ description: 'Probe requests in flight at once' }),
        api: Type.Optional(
          Type.Object(
            {
              budget: Type.Integer({ description: 'API probe requests a scan makes at most' }),
              sent: Type.Integer({ description: 'API probe requests this scan made (counted in sent above)' }),
              cors: Type.Integer({ description: 'CORS requests to API paths the page used (foreign and null Origin)' }),
              graphql: Type.Integer({ description: 'GraphQL introspection POSTs' }),
              openapi: Type.Integer({ description: 'GETs of OpenAPI/Swagger documents' }),
              errors: Type.Optional(
                Type.Integer({ description: 'GETs of a path that cannot exist under an API prefix the page used (its error page)' }),
              ),
            },
            { description: 'Probes of what the page revealed about its API; GET, OPTIONS and the introspection POST only' },
          ),
        ),
        apps: Type.Optional(
          Type.Object(
            {
              budget: Type.Integer({ description: 'Known-application probe requests a scan makes at most' }),
              sent: Type.Integer({ description: 'Known-application probe requests this scan made (counted in sent above)' }),
              wordpress: Type.Integer({ description: 'WordPress paths, sent only when the page is WordPress' }),
              basePath: Type.Integer({
                description:
                  "Paths under the scanned URL's base path (a wiki's own directory), sent when it is not / or the page is a wiki",
              }),
            },
            { description: 'Probes of known web applications; GET only' },
          ),
        ),
      },
      { description: 'The plain-HTTP probes of the site (exposed files, status pages), besides the page load' },
    ),
  ),
  createdAt: Type.String({ description: 'ISO 8601 date-time' }),
})

export type CheckResult = Static<typeof CheckResultSchema>
export type ReportCheck = Static<typeof ReportCheckSchema>
export type Advice = Static<typeof AdviceSchema>
export type ReportSummary = Static<typeof ReportSummarySchema>
export type Report = Static<typeof ReportSchema>

// The literal unions above must stay equal to the ones in checks/types.ts and scoring.ts.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
const sameUnions: [
  Same<Static<typeof SeveritySchema>, Severity>,
  Same<Static<typeof CheckStatusSchema>, CheckStatus>,
  Same<Static<typeof CategorySchema>, Category>,
  Same<Static<typeof GradeSchema>, Grade>,
] = [true, true, true, true]
void sameUnions
