// Page scripts are bundled from TypeScript and inlined: a bundle is one classic script in its own scope,
// and one that could end its <script> element early is refused rather than served.
import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { bundleClientScript } from '../../../api/http/client-script.ts'

const dir = mkdtempSync(join(tmpdir(), 'client-script-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function entry(name: string, source: string): URL {
  const path = join(dir, name)
  writeFileSync(path, source)
  return pathToFileURL(path)
}

describe('bundleClientScript', () => {
  test('bundles TypeScript and its imports into one self-contained script', async () => {
    entry('answer.ts', 'export const ANSWER: number = 42\n')
    const script = await bundleClientScript(entry('main.ts', "import { ANSWER } from './answer.ts'\ndocument.title = String(ANSWER)\n"))
    expect(script).toContain('42')
    expect(script).not.toMatch(/\bimport\b|\bexport\b|: number/)
  })

  test('refuses a script that would end its element early', async () => {
    const bad = entry('bad.ts', "document.body.insertAdjacentText('beforeend', '</script><script>alert(1)')\n")
    await expect(bundleClientScript(bad)).rejects.toThrow(/cannot be inlined/)
  })
})
