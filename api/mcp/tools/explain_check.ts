import { Type } from '@sinclair/typebox'
import { defineTool, readOnly } from './types.ts'
import { strict } from './schemas.ts'

export const explainCheck = defineTool({
  name: 'explain_check',
  description:
    'What a check looks at, why it matters, how a finding is confirmed (and what is deliberately not a finding), ' +
    'its severity and scoring penalty, and how to fix it per hosting platform (generic, vercel, netlify, nextjs, nginx, cloudflare). ' +
    'An unknown id answers not_found with suggestions.',
  plan: 'free',
  annotations: readOnly('Explain a check'),
  input: Type.Object({ checkId: Type.String({ minLength: 1, maxLength: 80, description: 'A check id from a report, e.g. csp.' }) }, strict),
  run: async (input, ctx) => ctx.services.checks.explain(input.checkId),
})
