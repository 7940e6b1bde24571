import { Type } from '@sinclair/typebox'
import { defineTool, readOnly } from './types.ts'
import { Cursor, Limit, NextCursor, Nullable, ScanStatus, strict, When } from './schemas.ts'

const App = Type.Object({
  id: Type.String(),
  origin: Type.String(),
  scans: Type.Integer(),
  createdAt: When('When the app was added'),
  lastActivityAt: When('Its latest scan, or when it was added'),
  latestScan: Nullable(
    Type.Object({
      id: Type.String(),
      status: ScanStatus,
      score: Nullable(Type.Integer()),
      grade: Nullable(Type.String()),
      createdAt: When('When the scan was requested'),
    }),
  ),
  latestCompletedScan: Nullable(
    Type.Object({
      id: Type.String(),
      score: Nullable(Type.Integer()),
      grade: Nullable(Type.String()),
      createdAt: When('When the scan was requested'),
    }),
  ),
})

const DEFAULT_LIMIT = 20

export const listApps = defineTool({
  name: 'list_apps',
  description:
    'The apps (origins) of this account, scanned or verified, most recent activity first: id, origin, number of scans, ' +
    'the latest scan (id, status, score, grade, createdAt) and the latest completed scan (the current score); both null before any scan. ' +
    'Returns {items, nextCursor}; pass nextCursor back as cursor for the next page (null on the last). ' +
    "scan_history with appId lists an app's scans.",
  plan: 'free',
  annotations: readOnly('List apps'),
  input: Type.Object({ limit: Limit, cursor: Cursor }, strict),
  output: Type.Object({ items: Type.Array(App), nextCursor: NextCursor }),
  run: async (input, ctx) => {
    const page = await ctx.services.scans.apps(ctx.principal, { cursor: input.cursor, limit: input.limit ?? DEFAULT_LIMIT })
    return {
      items: page.items.map((a) => ({
        id: a.id,
        origin: a.origin,
        scans: a.scans,
        createdAt: a.createdAt,
        lastActivityAt: a.lastActivityAt,
        latestScan: a.latestScan,
        latestCompletedScan: a.latestCompletedScan,
      })),
      nextCursor: page.nextCursor,
    }
  },
})
