// How much one scan gathers at most, and how long it waits for a page to go quiet.
export const GATHER_LIMITS = {
  mainBody: 512 * 1024,
  probeBody: 64 * 1024,
  html: 512 * 1024,
  scriptBody: 2 * 1024 * 1024,
  scriptsTotal: 8 * 1024 * 1024,
  scripts: 60,
  /** Inline code read for a computed Content-Security-Policy: items of each kind, text kept per item, elements walked. */
  inlineItems: 50,
  inlineText: 64 * 1024,
  inlineElements: 20_000,
  requests: 500,
  /** The page's own fetch/XHR calls kept with their answers, the bytes of each answer, and of all together. */
  apiCalls: 20,
  apiBody: 64 * 1024,
  apiTotal: 512 * 1024,
  websockets: 10,
  /** How long reading the page's API answers may wait once the page has been read (a stream never ends). */
  apiReadMs: 300,
  redirects: 10,
  sourceMaps: 5,
  /** Directory-like same-origin links of the page (folders it links, the folders of files it links) fetched for a listing. */
  directoryLinks: 3,
  /** After load: how long the network must stay idle, and the longest wait for it. */
  quietMs: 150,
  quietMaxMs: 1_000,
  /** Probes in flight at once against one origin: enough to be quick, few enough not to look like an attack. */
  probeConcurrency: 8,
}
