import { Type } from '@sinclair/typebox'
import { defineTool, readOnly } from './types.ts'
import { Cursor, Limit, NextCursor, strict } from './schemas.ts'

/** An app of the list; its latest scans as the description says. */
const App = Type.Object({ id: Type.String(), origin: Type.String(), scans: Type.Integer() })

const DEFAULT_LIMIT = 20

export const listApps = defineTool({
  name: 'list_apps',
  description:
    "The account's apps (origins), latest activity first, each with its scan count, latest scan and latest completed scan. " +
    "scan_history {appId} lists an app's scans.",
  plan: 'free',
  annotations: readOnly('List apps'),
  input: Type.Object({ limit: Limit, cursor: Cursor }, strict),
  output: Type.Object({
    items: Type.Array(App, { description: 'Also createdAt, lastActivityAt, latestScan, latestCompletedScan.' }),
    nextCursor: NextCursor,
  }),
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
