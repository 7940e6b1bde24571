import { Type } from '@sinclair/typebox'
import { PLATFORMS } from '../../../shared/checks/types.ts'
import { CategorySchema, SeveritySchema } from '../../../shared/report/schema.ts'
import { defineTool, readOnly } from './types.ts'
import { strict } from './schemas.ts'

export const explainCheck = defineTool({
  name: 'explain_check',
  description:
    'What a check looks at, why it matters, how a finding is confirmed (and what is deliberately not a finding), ' +
    'its severity and scoring penalty, and how to fix it per platform (generic, vercel, netlify, nextjs, express, django, rails, nginx, ' +
    'apache, caddy, iis, cloudflare; the generic fix where a check has none of its own). ' +
    'An unknown id answers not_found with suggestions.',
  plan: 'free',
  annotations: readOnly('Explain a check'),
  input: Type.Object({ checkId: Type.String({ minLength: 1, maxLength: 80, description: 'A check id from a report, e.g. csp.' }) }, strict),
  output: Type.Object({
    id: Type.String(),
    title: Type.String(),
    failTitle: Type.String({ description: 'The title a failing or warning result carries.' }),
    category: CategorySchema,
    severity: SeveritySchema,
    description: Type.String(),
    why: Type.String(),
    confirmation: Type.String(),
    fix: Type.Object(Object.fromEntries(PLATFORMS.map((p) => [p, Type.String()])), { description: 'How to fix it, per hosting platform.' }),
    scoring: Type.Object({ failPenalty: Type.Number(), warnPenalty: Type.Number(), note: Type.String() }),
    checksVersion: Type.String(),
  }),
  run: async (input, ctx) => ctx.services.checks.explain(input.checkId),
})
