// What the export writers share: the formats, and what a writer needs besides the report.

export const EXPORT_FORMATS = ['sarif', 'junit', 'markdown', 'html'] as const
export type ExportFormat = (typeof EXPORT_FORMATS)[number]

export interface ExportContext {
  /** The service's base URL, for links to the check documentation. */
  baseUrl: string
  /** The service's version, named as the SARIF tool's version. */
  version: string
  /**
   * SARIF only: the repository file (relative to its root, e.g. `vercel.json` or `app/layout.tsx`) that the
   * user maps the app to, where GitHub code scanning shows every result. Without it a result is located at
   * a relative reference made of the page's host and path.
   */
  repositoryPath?: string
}
