// What the service prints at start: where it is, where its keys come from, what is off and why, and how to
// stop it. Built from the configuration alone; the start itself is tested in admin.test.ts.
import { describe, expect, test } from 'bun:test'
import { bannerLines } from '../../server/main.ts'
import { loadConfig } from '../../shared/config.ts'

const production = (env: Record<string, string> = {}) =>
  loadConfig({ DATABASE_URL: 'postgres://db/x', REDIS_URL: 'redis://r', BASE_URL: 'https://www.example.com', ...env })
const deployed = { url: 'http://127.0.0.1:8787', localKey: null, localSignIn: null }

describe('the banner of a deployment with its own database', () => {
  test('prints no key but where keys come from, says the dashboard and the cron jobs are off and why, and how to stop', () => {
    const text = bannerLines(production(), deployed).join('\n')
    expect(text).toContain('MCP endpoint: https://www.example.com/api/mcp')
    expect(text).toContain('API keys:     bun run admin create-key --plan launch')
    expect(text).toContain('dashboard:    off: no sign-in without OIDC_ISSUER')
    expect(text).toContain('cron jobs:    off: set CRON_SECRET and run a caller (bun server/cron-caller.ts')
    expect(text).toContain(`Stop it with Ctrl-C (or: kill ${process.pid}).`)
    expect(text).not.toContain('act_')
  })

  test('with sign-in and a cron secret configured, names the dashboard as a source of keys and says nothing is off', () => {
    const config = production({ OIDC_ISSUER: 'https://id.example.com', OIDC_CLIENT_ID: 'a', CRON_SECRET: 'x'.repeat(32) })
    const text = bannerLines(config, deployed).join('\n')
    expect(text).toContain("bun run admin create-key --plan launch, or the dashboard's Settings")
    expect(text).not.toContain('off:')
  })
})
