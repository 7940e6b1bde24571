// Whole-file edits as one unified diff in git's format, which `git apply` (and `patch -p1`) accept: a
// `diff --git` header per file, `new file mode` for files the patch creates, and hunks with three lines of
// context. Paths were checked by the builder (plain relative paths), so no header line can be forged.
import { structuredPatch } from 'diff'
import { type FileEdit, isSafePath } from './plan.ts'

export function unifiedDiff(edits: readonly FileEdit[]): string {
  const out: string[] = []
  for (const e of [...edits].sort((a, b) => a.path.localeCompare(b.path))) {
    if (!isSafePath(e.path)) throw new Error('unsafe path in a patch')
    const created = e.before === null
    const p = structuredPatch(`a/${e.path}`, `b/${e.path}`, e.before ?? '', e.after, '', '', { context: 3 })
    if (p.hunks.length === 0) continue
    out.push(`diff --git a/${e.path} b/${e.path}`)
    if (created) out.push('new file mode 100644')
    out.push(created ? '--- /dev/null' : `--- a/${e.path}`, `+++ b/${e.path}`)
    for (const h of p.hunks) {
      // A created file's hunk starts at line 0 with no old lines (git's form: -0,0).
      const oldStart = h.oldLines === 0 ? 0 : h.oldStart
      out.push(`@@ -${oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`)
      out.push(...h.lines)
    }
  }
  return out.length ? `${out.join('\n')}\n` : ''
}
