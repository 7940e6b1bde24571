import { Type } from '@sinclair/typebox'
import { defineTool, readOnly } from './types.ts'
import { Cursor, Id, Limit, NextCursor, Nullable, strict } from './schemas.ts'

const Item = Type.Object({
  kind: Type.Optional(Type.Union([Type.Literal('scan'), Type.Literal('audit')])),
  id: Type.String({ description: 'scn_... or aud_...' }),
  appId: Type.Optional(Type.String()),
  url: Type.String(),
  status: Type.Union(['queued', 'running', 'completed', 'failed', 'cancelled'].map((s) => Type.Literal(s))),
  score: Type.Optional(Nullable(Type.Number())),
  grade: Type.Optional(Nullable(Type.String())),
  createdAt: Type.String({ description: 'ISO 8601, UTC.' }),
  finishedAt: Type.Optional(Nullable(Type.String({ description: 'ISO 8601, UTC.' }))),
})

const Output = Type.Object({
  filter: Type.Object({ appId: Nullable(Type.String()), origin: Nullable(Type.String()) }),
  items: Type.Array(Item),
  nextCursor: NextCursor,
})

const DEFAULT_LIMIT = 20

export const scanHistory = defineTool({
  name: 'scan_history',
  description:
    "This account's scans and whole-site audits, newest first, each marked by kind (scan or audit): kind, id (scn_... or aud_...), " +
    'url, status, score and grade (an audit: once completed), createdAt, finishedAt. ' +
    'Optionally only one app: appId (from list_apps) or url (any URL of the app: its origin is matched). ' +
    'Returns {items, nextCursor}; pass nextCursor back as cursor for the next page (null on the last). ' +
    "get_scan or get_findings {scanId} give a scan's report; get_audit {auditId} an audit's.",
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
