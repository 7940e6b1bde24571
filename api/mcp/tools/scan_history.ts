import { Type } from '@sinclair/typebox'
import { defineTool, readOnly } from './types.ts'
import { Cursor, Id, Limit, NextCursor, Nullable, strict } from './schemas.ts'

const Item = Type.Object(
  { id: Type.String(), url: Type.String(), status: Type.String() },
  { description: 'Also kind (scan or audit), appId, score, grade, createdAt, finishedAt.' },
)

const Output = Type.Object({
  filter: Type.Object({ appId: Nullable(Type.String()), origin: Nullable(Type.String()) }),
  items: Type.Array(Item),
  nextCursor: NextCursor,
})

const DEFAULT_LIMIT = 20

export const scanHistory = defineTool({
  name: 'scan_history',
  description:
    "This account's scans and audits, newest first: kind, id, url, status, score, grade, dates; optionally of one app (appId or " +
    'url). get_scan or get_audit give one.',
  plan: 'free',
  annotations: readOnly('Scan history'),
  input: Type.Object(
    {
      url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: "Only this URL's origin." })),
      appId: Type.Optional(Id('app')),
      limit: Limit,
      cursor: Cursor,
    },
    strict,
  ),
  output: Output,
  run: async (input, ctx) => {
    const { origin, items, nextCursor } = await ctx.services.scans.history(ctx.principal, {
      url: input.url,
      appId: input.appId,
      cursor: input.cursor,
      limit: input.limit ?? DEFAULT_LIMIT,
    })
    return {
      filter: { appId: input.appId ?? null, origin },
      items: items.map((s) => ({
        kind: s.kind,
        id: s.id,
        appId: s.appId,
        url: s.url,
        status: s.status,
        score: s.score,
        grade: s.grade,
        createdAt: s.createdAt,
        finishedAt: s.finishedAt,
      })),
      nextCursor,
    }
  },
})
