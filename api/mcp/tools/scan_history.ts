import { Type } from '@sinclair/typebox'
import { decodeKeyset, encodeKeyset, getApp, listScans } from '../../../shared/db/scans.ts'
import { parseTargetUrl } from '../../../shared/egress/guard.ts'
import { AppError } from '../../../shared/errors.ts'
import { defineTool, readOnly } from './types.ts'
import { Cursor, Id, Limit, strict } from './schemas.ts'

const DEFAULT_LIMIT = 20
const CURSOR_KIND = 'scan_history'

export const badCursor = (tool: string) =>
  new AppError('invalid_params', `cursor is not a ${tool} cursor: pass nextCursor from the previous page unchanged.`, {
    details: [{ path: '/cursor', message: 'Invalid cursor' }],
  })

export const scanHistory = defineTool({
  name: 'scan_history',
  description:
    "This account's scans, newest first: id, url, status, score, grade, createdAt, finishedAt. " +
    'Optionally only one app: appId (from list_apps) or url (any URL of the app: its origin is matched). ' +
    'Returns {items, nextCursor}; pass nextCursor back as cursor for the next page (null on the last). ' +
    'get_scan or get_findings give a scan\'s report.',
  plan: 'free',
  annotations: readOnly('Scan history'),
  input: Type.Object(
    {
      url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: 'Only scans of this URL\'s origin (scheme, host and port), e.g. https://www.example.com/.' })),
      appId: Type.Optional(Id('app', 'app')),
      limit: Limit,
      cursor: Cursor,
    },
    strict,
  ),
  run: async (input, ctx) => {
    const sql = ctx.services.db.sql
    const accountId = ctx.principal.account.id
    const after = input.cursor === undefined ? null : decodeKeyset(CURSOR_KIND, input.cursor)
    if (after === null && input.cursor !== undefined) throw badCursor('scan_history')
    let origin: string | undefined
    if (input.url !== undefined) {
      const parsed = parseTargetUrl(input.url)
      if (!parsed.ok) throw new AppError('invalid_url', parsed.message)
      origin = parsed.url.origin
    }
    if (input.appId !== undefined && !(await getApp(sql, accountId, input.appId))) {
      throw new AppError('not_found', `No app ${input.appId} in this account; list_apps lists them.`)
    }
    const page = await listScans(sql, accountId, { appId: input.appId, origin, after, limit: input.limit ?? DEFAULT_LIMIT })
    return {
      filter: { appId: input.appId ?? null, origin: origin ?? null },
      items: page.items.map((s) => ({
        id: s.id,
        appId: s.appId,
        url: s.url,
        status: s.status,
        score: s.score,
        grade: s.grade,
        createdAt: s.createdAt,
        finishedAt: s.finishedAt,
      })),
      nextCursor: page.next ? encodeKeyset(CURSOR_KIND, page.next) : null,
    }
  },
})
