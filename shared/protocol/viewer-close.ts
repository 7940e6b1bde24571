// The live viewer socket's close codes: the api closes with them and the viewer's browser script
// (api/viewer/client.ts) reads them. Nothing else here, so that script can bundle this file for a browser.

/** Close code for "the crawl has ended" (4000-4999 are for applications). 1008 is used for a bad link. */
export const CLOSE_ENDED = 4001
export const CLOSE_POLICY = 1008
