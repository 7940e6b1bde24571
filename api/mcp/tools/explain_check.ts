import { Type } from '@sinclair/typebox'
import { CategorySchema, SeveritySchema } from '../../../shared/report/schema.ts'
import { defineTool, readOnly } from './types.ts'
import { strict } from './schemas.ts'

export const explainCheck = defineTool({
  name: 'explain_check',
  description: 'What a check looks at, why it matters, how a finding is confirmed, its severity and penalty, and its fix per platform.',
  plan: 'free',
  annotations: readOnly('Explain a check'),
  input: Type.Object({ checkId: Type.String({ minLength: 1, maxLength: 80, description: 'From a report, e.g. csp.' }) }, strict),
  output: Type.Object({
    id: Type.String(),
    title: Type.String(),
    failTitle: Type.String(),
    category: CategorySchema,
    severity: SeveritySchema,
    description: Type.String(),
    why: Type.String(),
    confirmation: Type.String(),
    fix: Type.Record(Type.String(), Type.String(), { description: 'Per platform: generic, vercel, nginx...' }),
    scoring: Type.Object({ failPenalty: Type.Number(), warnPenalty: Type.Number(), note: Type.String() }),
    checksVersion: Type.String(),
  }),
  run: async (input, ctx) => ctx.services.checks.explain(input.checkId),
})
