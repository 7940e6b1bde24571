// The service on port 0 knows its own URL: the api's server is bound before anything that writes links is
// made, answers 503 until the app is handed to it, and BASE_URL's default names the port it got.
import { afterAll, describe, expect, test } from 'bun:test'
import { listenApi } from '../../server/api-server.ts'
import { withOwnUrl } from '../../server/boot.ts'
import { loadConfig } from '../../shared/config.ts'
import { createLogger } from '../../shared/lib/log.ts'

const stops: Array<() => void> = []
afterAll(() => {
  for (const s of stops) s()
})

describe('the api listener', () => {
  test('binds at once, answers 503 with Retry-After until served, then hands every request to the app', async () => {
    const listener = listenApi({ HOST: '127.0.0.1', PORT: 0 }, createLogger('error'))
    stops.push(listener.stop)
    expect(listener.port).toBeGreaterThan(0)
    const early = await fetch(`http://127.0.0.1:${listener.port}/healthz`)
    expect(early.status).toBe(503)
    expect(early.headers.get('retry-after')).toBe('1')
    expect(await early.text()).toBe('Starting\n')
    listener.serve({ fetch: (req) => new Response(`app: ${new URL(req.url).pathname}`), websocket: { message() {} } })
    const late = await fetch(`http://127.0.0.1:${listener.port}/x`)
    expect(await late.text()).toBe('app: /x')
  })
})

describe("the service's own URL", () => {
  const config = (env: Record<string, string>) => loadConfig({ DATA_DIR: '/tmp/x', ...env })

  test('on port 0 without BASE_URL: the port it got, on HOST, localhost when HOST is every address', () => {
    expect(withOwnUrl(config({ PORT: '0', HOST: '127.0.0.1' }), { port: 4321 }).baseUrl).toBe('http://127.0.0.1:4321')
    expect(withOwnUrl(config({ PORT: '0', HOST: '0.0.0.0' }), { port: 4321 }).baseUrl).toBe('http://localhost:4321')
    expect(withOwnUrl(config({ PORT: '0', HOST: '::1' }), { port: 4321 }).baseUrl).toBe('http://[::1]:4321')
  })

  test('BASE_URL, a given port, or no api: the configuration as it was', () => {
    const given = config({ PORT: '0', BASE_URL: 'https://www.example.com' })
    expect(withOwnUrl(given, { port: 4321 })).toBe(given)
    expect(withOwnUrl(config({ PORT: '8080' }), { port: 8080 }).baseUrl).toBe('http://localhost:8080')
    expect(withOwnUrl(config({ PORT: '0' }), null).baseUrl).toBe('http://localhost:0')
  })
})
