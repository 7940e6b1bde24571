import { Type } from '@sinclair/typebox'
import { defineTool, readOnly } from './types.ts'
import { Cursor, Id, Limit, strict } from './schemas.ts'

const DEFAULT_LIMIT = 20

export const scanHistory = defineTool({
  name: 'scan_history',
  description:
    "This account's scans, newest first: id, url, status, score, grade, createdAt, finishedAt. " +
    'Optionally only one app: appId (from list_apps) or url (any URL of the app: its origin is matched). ' +
    'Returns {items, nextCursor}; pass nextCursor back as cursor for the next page (null on the last). ' +
    "get_scan or get_findings give a scan's report.",
  plan: 'free',
  annotations: readOnly('Scan history'),
  input: Type.Object(
    {
      url: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 2048,
          description: "Only scans of this URL's origin (scheme, host and port), e.g. https://www.example.com/.",
        }),
      ),
      appId: Type.Optional(Id('app', 'app')),
      limit: Limit,
      cursor: Cursor,
    },
    strict,
  ),
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
