// The layers of docs/architecture.md, read from the source: server/ over api/, cli/ and crawler/, over
// shared/, with no arrow back up; the CLI a client that takes only shared/ of the project; and the
// environment read in one place (shared/config.ts) by the service, and at the CLI's entry point only; and
// orchestrators that read in one screen: no function over 80 lines, no source file over 400 but a data table.
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import ts from 'typescript'

const ROOT = resolve(import.meta.dir, '..')
const LAYERS = ['server', 'api', 'cli', 'crawler', 'shared'] as const
type Layer = (typeof LAYERS)[number]

/** What each layer may import of the project. */
const ALLOWED: Record<Layer, readonly Layer[]> = {
  server: ['server', 'api', 'crawler', 'shared'],
  api: ['api', 'shared'],
  crawler: ['crawler', 'shared'],
  cli: ['cli', 'shared'],
  shared: ['shared'],
}

const sources = [...new Bun.Glob('{server,api,cli,crawler,shared}/**/*.ts').scanSync({ cwd: ROOT })].filter((f) => !f.endsWith('.test.ts'))
const layerOf = (file: string) => file.split('/')[0] as Layer
/** The project files a source file imports (static and dynamic imports with a relative specifier). */
function projectImports(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8')
  const found: string[] = []
  for (const m of text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|^import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm)) {
    found.push(relative(ROOT, resolve(ROOT, dirname(file), m[1]!)))
  }
  return found
}

describe('layers', () => {
  test('the source is found', () => {
    expect(sources.length).toBeGreaterThan(200)
    for (const layer of LAYERS) expect(sources.some((f) => layerOf(f) === layer)).toBe(true)
  })

  test('no layer imports one above it or beside it', () => {
    const wrong: string[] = []
    for (const file of sources) {
      const from = layerOf(file)
      for (const target of projectImports(file)) {
        const to = target.split('/')[0] as Layer
        if (!(LAYERS as readonly string[]).includes(to)) continue // package.json, for the version
        if (!ALLOWED[from].includes(to)) wrong.push(`${file} -> ${target}`)
      }
    }
    expect(wrong).toEqual([])
  })

  test('only shared/config.ts reads the environment; the CLI reads it once, at its entry point', () => {
    const readers = sources.filter((f) => {
      const code = readFileSync(join(ROOT, f), 'utf8')
        .split('\n')
        // Fix advice quotes process.env inside strings: only code counts.
        .filter((line) => !/^\s*(['"`]|\/\/|\*)/.test(line) && !/['"`][^'"`]*process\.env[^'"`]*['"`]/.test(line))
        .join('\n')
      return /\bprocess\.env\b|\bBun\.env\b/.test(code)
    })
    expect(readers.sort()).toEqual(['cli/appaudit.ts', 'shared/config.ts'])
  })
})

describe('sizes', () => {
  /** Files that read better whole, and why (docs/architecture.md). */
  const WHOLE: Record<string, string> = {
    'shared/checks/data/vulnerable-libraries.ts': 'a data table: one entry a library, nothing to call',
  }

  test('no function over 80 lines and no source file over 400, but the data tables', () => {
    const long: string[] = []
    for (const file of sources) {
      const text = readFileSync(join(ROOT, file), 'utf8')
      const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
      const lines = text.split('\n').length
      if (lines > 400 && !WHOLE[file]) long.push(`${file}: ${lines} lines`)
      const visit = (node: ts.Node) => {
        if (ts.isFunctionLike(node) && 'body' in node && node.body) {
          const from = source.getLineAndCharacterOfPosition(node.getStart()).line
          const to = source.getLineAndCharacterOfPosition(node.getEnd()).line
          if (to - from + 1 > 80) long.push(`${file}:${from + 1}: a function of ${to - from + 1} lines`)
        }
        ts.forEachChild(node, visit)
      }
      visit(source)
    }
    expect(long).toEqual([])
  })
})
