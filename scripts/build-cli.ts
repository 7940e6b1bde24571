// Builds the appaudit command into one file, dist/appaudit.js, that runs with bun alone: the GitHub Action
// (action.yml) runs it without installing anything. The file is committed, so the action works from a
// checkout at any ref; test/cli/bundle.test.ts fails when it is not what this script makes of the source.
//
//   bun run build:cli            writes dist/appaudit.js
//   bun scripts/build-cli.ts --check   exits 1 when dist/appaudit.js is out of date
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

const ROOT = join(import.meta.dir, '..')
export const BUNDLE = join(ROOT, 'dist', 'appaudit.js')

/** The bundle's text. Bun names each bundled module in a comment by its path from the entry point; the
 * node_modules part is cut to `node_modules/...` so every checkout (a linked node_modules too) makes the same file. */
export async function buildCli(): Promise<string> {
  const out = await Bun.build({ entrypoints: [join(ROOT, 'cli', 'appaudit.ts')], target: 'bun' })
  if (!out.success || out.outputs.length !== 1) {
    throw new Error(`bun build failed:\n${out.logs.map((l) => String(l)).join('\n')}`)
  }
  const text = await out.outputs[0]!.text()
  return text.replace(/^\/\/ [^\n]*?(node_modules\/)/gm, '// $1')
}

if (import.meta.main) {
  const text = await buildCli()
  if (process.argv.includes('--check')) {
    const current = readFileSync(BUNDLE, 'utf8')
    if (current !== text) {
      console.error('dist/appaudit.js is out of date: run bun run build:cli and commit it')
      process.exit(1)
    }
    console.log('dist/appaudit.js is up to date')
  } else {
    writeFileSync(BUNDLE, text, { mode: 0o755 })
    console.log(`dist/appaudit.js: ${Buffer.byteLength(text)} bytes`)
  }
}
