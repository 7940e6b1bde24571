// What the report pages take from a URL: a report's id, by its kind, and the page numbers of its two lists.
import { Value } from '@sinclair/typebox/value'
import { t } from 'elysia'
import type { ShareKind } from '../../shared/db/shares.ts'
import type { ListPages } from './pages.ts'

/** A scan's or an audit's id, as the services mint them. */
export const ReportId: Record<ShareKind, ReturnType<typeof t.String>> = {
  scan: t.String({ pattern: '^scn_[0-9A-Za-z]{1,64}$' }),
  audit: t.String({ pattern: '^aud_[0-9A-Za-z]{1,64}$' }),
}

export const isIdOf = (kind: ShareKind, id: unknown): id is string => Value.Check(ReportId[kind], id)

/** A page of a list: a small positive integer. */
export const ListPage = t.Integer({ minimum: 1, maximum: 100_000 })

/** ?page=N (the pages table) and ?findings=N (the findings), each the first page when absent or out of range. */
export function listPages(url: URL): ListPages {
  const n = (name: string) => {
    const v = Number(url.searchParams.get(name) ?? '1')
    return Value.Check(ListPage, v) ? v : 1
  }
  return { pages: n('page'), findings: n('findings') }
}
