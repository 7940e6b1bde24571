// The writers that need nothing but the report: SARIF, JUnit XML and Markdown. The service's export_report
// uses them (with HTML, its own page, beside them) and so does the appaudit command, which writes the same
// files on every plan from the report it already holds.
import { toJunit } from './junit.ts'
import { toMarkdown } from './markdown.ts'
import type { ReportModel } from './model.ts'
import { toSarif } from './sarif.ts'
import type { ExportContext } from './types.ts'

export interface Writer {
  mediaType: string
  /** The file name's ending, after the report's id: appaudit-scn_....sarif */
  suffix: string
  write(model: ReportModel, ctx: ExportContext): string
}

export const REPORT_WRITERS = {
  sarif: { mediaType: 'application/sarif+json', suffix: 'sarif', write: toSarif },
  junit: { mediaType: 'application/xml', suffix: 'junit.xml', write: toJunit },
  markdown: { mediaType: 'text/markdown', suffix: 'md', write: toMarkdown },
} as const satisfies Record<string, Writer>

export type ReportFormat = keyof typeof REPORT_WRITERS
