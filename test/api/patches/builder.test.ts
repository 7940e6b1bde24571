// The patch builder over every platform: without a repository it creates each platform's files, and hostile
// values (third-party names, repository paths) never reach a file. Each platform's own fixture test sits in
// platforms/<platform>.test.ts.
import { afterAll, describe, expect, test } from 'bun:test'
import { buildPatch, PATCH_PLATFORMS, type PatchSource } from '../../../api/patches/builder.ts'
import { unifiedDiff } from '../../../api/patches/diff.ts'
import { applyPatch, removeRepos, repoOf, SOURCE } from './patch-repos.ts'

afterAll(removeRepos)

test('without a repository the patch creates the platform files and applies to an empty repository', () => {
  for (const platform of PATCH_PLATFORMS) {
    const dir = repoOf(null)
    const plan = buildPatch(platform, SOURCE)
    const diff = unifiedDiff(plan.edits)
    expect(diff).toContain('new file mode 100644')
    expect(diff).toContain('--- /dev/null')
    applyPatch(dir, diff)
  }
})

describe('hostile input', () => {
  test('third-party names with newlines, quotes or nginx variables never reach a file', () => {
    const hostile: PatchSource = {
      ...SOURCE,
      checks: [
        {
          id: 'third-party-requests',
          evidence: {
            domains: [
              { domain: 'evil.com;\n}\nserver { listen 9; location / { return 200 "$http_cookie"; }', types: ['script'] },
              { domain: 'evil.com"; add_header X-Pwn 1', types: ['script'] },
              { domain: 'a.com\n+++ b/etc/passwd', types: ['script'] },
              { domain: '${process.env.SECRET}.com', types: ['script'] },
              { domain: 'good.example', types: ['script'] },
            ],
          },
        },
      ],
    }
    for (const platform of PATCH_PLATFORMS) {
      const diff = unifiedDiff(buildPatch(platform, hostile).edits)
      expect(diff).not.toContain('evil.com')
      expect(diff).not.toContain('X-Pwn')
      expect(diff).not.toContain('passwd')
      expect(diff).not.toContain('process.env.SECRET')
      expect(diff).toContain('https://good.example')
      const dir = repoOf(null)
      applyPatch(dir, diff)
    }
  })
})
