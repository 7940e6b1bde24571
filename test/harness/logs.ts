// The service's log lines in tests that run it in their own process: it writes JSON lines to stdout and
// stderr, which are kept here (and not printed) so that a test can search them, for a planted secret say.

/** Starts keeping log lines; returns them (a live list) and the function that restores the streams. */
export function captureLogLines(): { lines: string[]; restore(): void } {
  const lines: string[] = []
  const realOut = process.stdout.write.bind(process.stdout)
  const realErr = process.stderr.write.bind(process.stderr)
  const capture = (real: typeof realOut) =>
    ((chunk: unknown, ...rest: unknown[]) => {
      const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8')
      if (text.startsWith('{"t":')) {
        lines.push(text)
        return true
      }
      return (real as (...a: unknown[]) => boolean)(chunk, ...rest)
    }) as typeof realOut
  process.stdout.write = capture(realOut)
  process.stderr.write = capture(realErr)
  return {
    lines,
    restore() {
      process.stdout.write = realOut
      process.stderr.write = realErr
    },
  }
}
