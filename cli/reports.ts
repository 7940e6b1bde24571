// Report files. SARIF, JUnit XML and Markdown are written here from the report the command already holds,
// by the same writers as the service's export_report (shared/report/export/writers.ts), so they work on
// every plan and cost no further call for a scan. HTML is the service's page: export_report (Launch).
import { mkdirSync, writeFileSync } from 'node:fs'
import { basename, dirname } from 'node:path'
import { errorMessage } from '../shared/errors.ts'
import { readCappedBytes } from '../shared/lib/http-body.ts'
import type { ReportModel } from '../shared/report/export/model.ts'
import type { ExportContext } from '../shared/report/export/types.ts'
import { REPORT_WRITERS, type ReportFormat } from '../shared/report/export/writers.ts'
import type { Format, Options } from './args.ts'
import { Failure, type Service, usage } from './client.ts'
import { EXIT, type Outcome, type Progress } from './output.ts'

const EXPORT_TIMEOUT_MS = 120_000
/** The largest report the command downloads. */
const MAX_EXPORT_BYTES = 50 * 1024 * 1024

type Report = NonNullable<Outcome['report']>

/** A format the command writes itself (every plan), rather than asking export_report for. */
export const writesItself = (format: Format): format is ReportFormat => Object.hasOwn(REPORT_WRITERS, format)

/** Writes the report in a format the command makes itself: the file the service's export_report would give. */
export function writeReport(model: ReportModel, format: ReportFormat, o: Options, ctx: ExportContext): Report {
  const writer = REPORT_WRITERS[format]
  const body = writer.write(model, { ...ctx, repositoryPath: o.sarifPath })
  const path = o.output ?? `appaudit-${safeId(model.id)}.${writer.suffix}`
  writeFile(path, body)
  return { format, path, bytes: Buffer.byteLength(body) }
}

/** The report as the service's export_report makes it (HTML; Launch plan), inline or from its short-lived link. */
export async function exportReport(service: Service, o: Options, id: string, progress: Progress): Promise<Report> {
  progress.update(`export_report ${o.format}`)
  const which = id.startsWith('aud_') ? { auditId: id } : { scanId: id }
  const answer = await service.call<ExportAnswer>('export_report', { ...which, format: o.format }, { timeoutMs: EXPORT_TIMEOUT_MS })
  // The file name the service suggests is used only as a bare name in the working directory: a service
  // (or anyone on an http link) must not choose where on the runner a file is written.
  const path = o.output ?? safeFileName(answer.filename, `appaudit-${safeId(id)}.${o.format}`)
  let body: string | Uint8Array
  if (typeof answer.content === 'string') body = answer.content
  else if (answer.url) {
    // Large reports come as a short-lived link: a plain GET, no key sent along.
    const res = await fetch(answer.url, { signal: AbortSignal.timeout(EXPORT_TIMEOUT_MS) }).catch((e: Error) => {
      throw new Failure(EXIT.serviceFailed, 'export_download', `could not download the report: ${e.message}`)
    })
    if (!res.ok) throw new Failure(EXIT.serviceFailed, 'export_download', `the report link answered ${res.status}`)
    const { body: bytes, truncated } = await readCappedBytes(res.body, MAX_EXPORT_BYTES)
    if (truncated) throw new Failure(EXIT.serviceFailed, 'export_download', `the report is larger than ${MAX_EXPORT_BYTES} bytes`)
    body = bytes
  } else throw new Failure(EXIT.serviceFailed, 'bad_answer', 'export_report answered with neither content nor url')
  writeFile(path, body)
  return { format: answer.format ?? o.format!, path, bytes: typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength }
}

/** A bare file name of safe characters, or the fallback. */
export function safeFileName(suggested: string | undefined, fallback: string): string {
  const name = basename(suggested ?? '')
  return /^[A-Za-z0-9][A-Za-z0-9._-]{0,120}$/.test(name) ? name : fallback
}

/** An id from the service as a part of a file name: its safe characters only. */
const safeId = (id: string) => id.replace(/[^A-Za-z0-9_-]/g, '').slice(0, 64) || 'report'

export function writeFile(path: string, body: string | Uint8Array) {
  try {
    mkdirSync(dirname(path), { recursive: true })
    writeFileSync(path, body)
  } catch (e) {
    throw usage(`cannot write ${path}: ${errorMessage(e)}`)
  }
}

interface ExportAnswer {
  format?: string
  filename?: string
  bytes?: number
  content?: string
  url?: string
}
