// Plain-text output helpers for the comparison benches.

/** A table with every column left-aligned except those listed in `right`; two spaces between columns. */
export function textTable(rows: string[][], right: number[] = []): string {
  const widths: number[] = []
  for (const r of rows) for (const [i, c] of r.entries()) widths[i] = Math.max(widths[i] ?? 0, c.length)
  return rows
    .map((r) =>
      r
        .map((c, i) => (right.includes(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')
}

/** Greedy word wrap at `width` characters; lines after the first start with `indent`. */
export function wrap(text: string, width: number, indent: string): string {
  const lines: string[] = []
  let line = ''
  for (const w of text.split(' ')) {
    if (line && line.length + 1 + w.length > width) {
      lines.push(line)
      line = w
    } else line = line ? `${line} ${w}` : w
  }
  if (line) lines.push(line)
  return lines.map((l, i) => (i === 0 ? l : indent + l)).join('\n')
}
