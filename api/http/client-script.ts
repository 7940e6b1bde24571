// The browser scripts of the server-rendered pages (the dashboard, the report page's poller and replay
// player, the live viewer) are TypeScript files beside their pages, type-checked and linted like the rest,
// and bundled here with Bun.build as the MCP App's view is. Each page module bundles its script once when
// it is loaded and inlines it (by nonce or by hash), so a page never loads a script from anywhere.

/** Refuses a bundle that would end its inline <script> early, rather than rewriting minified code. */
function inlineSafe(entry: string, text: string): string {
  if (/<\/script/i.test(text) || text.includes('<!--')) throw new Error(`${entry} cannot be inlined: it contains </script or <!--`)
  return text
}

/**
 * The entry file (a URL beside the caller: new URL('./client.ts', import.meta.url)) as one classic script
 * in its own scope: iife, minified, for the browser. Its imports must be browser-safe (no node: modules).
 */
export async function bundleClientScript(entry: URL): Promise<string> {
  const path = entry.pathname
  const built = await Bun.build({ entrypoints: [path], target: 'browser', format: 'iife', minify: true })
  if (!built.success || !built.outputs[0]) {
    throw new Error(`Bundling ${path} failed: ${built.logs.map((l) => l.message).join('; ') || 'no output'}`)
  }
  return inlineSafe(path, (await built.outputs[0].text()).trim())
}
