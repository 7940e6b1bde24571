// Redaction for evidence: enough to recognise a value, never enough to use it.

/** `sk_live_…abcd`: the first `head` and last `tail` characters; short values keep less. */
export function redact(value: string, head = 8, tail = 4): string {
  if (value.length <= 8) return '…'
  if (value.length < head + tail + 8) return `${value.slice(0, Math.min(4, head))}…`
  return `${value.slice(0, head)}…${value.slice(-tail)}`
}

/** https://user:pass@host/x -> https://***@host/x; scp-like git@host:repo is left as is (no secret in it). */
export function redactUrlCredentials(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^@/\s]*@/i, '$1***@')
}

/** `KEY=***`, for a dotenv line. */
export function redactAssignment(line: string): string {
  const eq = line.indexOf('=')
  return eq === -1 ? redact(line) : `${line.slice(0, eq + 1)}***`
}
