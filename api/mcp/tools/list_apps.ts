import { Type } from '@sinclair/typebox'
import { defineTool, readOnly } from './types.ts'
import { Cursor, Limit, strict } from './schemas.ts'

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
