// The report as an MCP App (@modelcontextprotocol/ext-apps): one ui:// HTML resource that hosts
// supporting MCP Apps render inline for the results of scan_app, get_scan and get_audit. Tools link to it
// from their `_meta` in tools/list; the server lists and serves it through resources/list and
// resources/read (../resources.ts). Hosts without MCP Apps ignore all of this and read the JSON as before.
import { RESOURCE_MIME_TYPE, RESOURCE_URI_META_KEY } from '@modelcontextprotocol/ext-apps/server'
import type { ListResourcesResult, ReadResourceResult } from '@modelcontextprotocol/sdk/types.js'
import { reportHtml } from './html.ts'

export const REPORT_APP_URI = 'ui://appaudit/report.html'
export const REPORT_APP_MIME = RESOURCE_MIME_TYPE

/** The `_meta` of a tool whose result the report view shows (with the older flat key for older hosts). */
export const reportAppToolMeta = () => ({ ui: { resourceUri: REPORT_APP_URI }, [RESOURCE_URI_META_KEY]: REPORT_APP_URI })

/** No external origin at all: empty lists mean no connections and no remote resources. */
const UI_META = { ui: { csp: { connectDomains: [], resourceDomains: [], frameDomains: [] }, prefersBorder: true } }

const RESOURCE = {
  uri: REPORT_APP_URI,
  name: 'report',
  title: 'App Audit report',
  description:
    'Interactive report of a scan or an audit: score and grade, findings by impact with evidence and fix, and the pages of an audit.',
  mimeType: REPORT_APP_MIME,
  _meta: UI_META,
}

export function listAppResources(): ListResourcesResult {
  return { resources: [RESOURCE] }
}

/** The resource, or null for a URI this server does not have. */
export async function readAppResource(uri: string): Promise<ReadResourceResult | null> {
  if (uri !== REPORT_APP_URI) return null
  return { contents: [{ uri: REPORT_APP_URI, mimeType: REPORT_APP_MIME, text: await reportHtml(), _meta: UI_META }] }
}
