// A minimal MCP Apps host for the report view's test, bundled for the browser: the package's AppBridge
// talking over postMessage to the view in a sandboxed iframe (scripts allowed, no same origin), as web
// hosts render apps. Tool calls from the view go to window.callServerTool, which the test wires to the
// real MCP client. Messages a hostile report might post from the iframe are recorded, never acted on.
import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'

declare global {
  interface Window {
    callServerTool?: (name: string, args: Record<string, unknown>) => Promise<CallToolResult>
    host: typeof host
    /** Every message from a frame that was not the bridge's JSON-RPC. */
    strayMessages: unknown[]
  }
}

window.strayMessages = []
window.addEventListener('message', (e) => {
  const d = e.data as { jsonrpc?: unknown } | null
  if (!d || typeof d !== 'object' || d.jsonrpc !== '2.0') window.strayMessages.push(d)
})

let bridge: AppBridge | null = null
let sizes: Array<{ width?: number; height?: number }> = []

const host = {
  /** Frames the view's HTML and completes the ui/initialize handshake; resolves once the view is initialized. */
  async load(html: string, id: string, serverTools = true): Promise<{ appName: string | undefined }> {
    const iframe = document.createElement('iframe')
    iframe.id = id
    iframe.setAttribute('sandbox', 'allow-scripts')
    iframe.style.width = '900px'
    iframe.style.height = '1200px'
    document.body.append(iframe)
    bridge = new AppBridge(
      null,
      { name: 'appaudit-test-host', version: '1.0.0' },
      serverTools ? { serverTools: {}, logging: {} } : { logging: {} },
      { hostContext: { theme: 'light', displayMode: 'inline' } },
    )
    bridge.oncalltool = async (params) => {
      if (!window.callServerTool) throw new Error('no server')
      return window.callServerTool(params.name, params.arguments ?? {})
    }
    bridge.onsizechange = (s) => {
      sizes.push(s)
    }
    const initialized = new Promise<void>((resolve) => {
      bridge!.oninitialized = () => resolve()
    })
    await bridge.connect(new PostMessageTransport(iframe.contentWindow!, iframe.contentWindow!))
    iframe.srcdoc = html
    await Promise.race([
      initialized,
      new Promise((_, reject) => setTimeout(() => reject(new Error('the view did not initialize within 30 s')), 30_000)),
    ])
    return { appName: bridge.getAppVersion()?.name }
  },
  async sendResult(args: Record<string, unknown>, result: CallToolResult) {
    await bridge!.sendToolInput({ arguments: args })
    await bridge!.sendToolResult(result)
  },
  sizes: () => sizes,
  async close() {
    await bridge?.teardownResource({}).catch(() => {})
    await bridge?.close()
    bridge = null
    sizes = []
  },
}

window.host = host
