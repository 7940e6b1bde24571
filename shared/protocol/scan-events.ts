// Events a worker publishes while it runs a scan; the api relays them as MCP progress notifications.
export type ScanEvent =
  | { type: 'progress'; progress: number; total: number; message: string }
  | { type: 'done'; status: 'completed' | 'failed' }

export const scanChannel = (scanId: string) => `scan:${scanId}`

export function parseScanEvent(raw: string): ScanEvent | null {
  try {
    const e = JSON.parse(raw) as ScanEvent
    return e && (e.type === 'progress' || e.type === 'done') ? e : null
  } catch {
    return null
  }
}
