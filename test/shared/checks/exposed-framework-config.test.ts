import { describe, expect, test } from 'bun:test'
import {
  exposedFrameworkConfig,
  readCompose,
  readJsConfig,
  readWpConfig,
} from '../../../shared/checks/exposure/exposed-framework-config.ts'
import { BASELINE_PROBE } from '../../../shared/checks/probe-paths.ts'
import type { ProbeResult } from '../../../shared/checks/types.ts'
import { makeArtifacts, noise, probe, SPA_HTML } from './artifacts.ts'

const NEXT_CONFIG = `/** @type {import('next').NextConfig} */
const nextConfig = {
  reactStrictMode: true,
  images: { remotePatterns: [{ hostname: 'cdn.example.com' }] },
  async rewrites() {
    return [{ source: '/api/:path*', destination: 'http://10.0.0.12:8080/:path*' }]
  },
}
module.exports = nextConfig
`

const VITE_CONFIG = `import { defineConfig } from 'vite'
import react from '@vitejs/plugin-react'
export default defineConfig({
  plugins: [react()],
  server: { proxy: { '/api': 'http://localhost:8080' } },
})
`

const WEBPACK_CONFIG = `const path = require('path')
module.exports = {
  mode: 'production',
  entry: './src/index.js',
  output: { path: path.resolve(__dirname, 'dist'), filename: 'bundle.js' },
  module: { rules: [{ test: /\\.js$/, use: 'babel-loader' }] },
}
`

const DB_PASSWORD = noise(20, 31)
const COMPOSE = `version: "3.9"
services:
  web:
    build: .
    ports:
      - "3000:3000"
    environment:
      - DATABASE_URL=\${DATABASE_URL}
      - NODE_ENV=production
  db:
    image: postgres:16
    environment:
      POSTGRES_PASSWORD: ${DB_PASSWORD}
      POSTGRES_USER: app
volumes:
  data:
`

const WP_CONFIG = `<?php
define( 'DB_NAME', 'wordpress' );
define( 'DB_USER', 'wp' );
define( 'DB_PASSWORD', '${DB_PASSWORD}' );
define( 'DB_HOST', 'localhost' );
define( 'AUTH_KEY', 'put your unique phrase here' );
$table_prefix = 'wp_';
require_once ABSPATH . 'wp-settings.php';
`

const run = (probes: Record<string, ProbeResult>) =>
  exposedFrameworkConfig.run(makeArtifacts({ probes: { [BASELINE_PROBE]: probe(BASELINE_PROBE, SPA_HTML, 200, 'text/html'), ...probes } }))

describe('exposed-framework-config', () => {
  test('fails served next, vite and webpack configs, medium, with the keys seen', () => {
    const r = run({
      '/next.config.js': probe('/next.config.js', NEXT_CONFIG, 200, 'application/javascript'),
      '/vite.config.js': probe('/vite.config.js', VITE_CONFIG, 200, 'application/javascript'),
      '/webpack.config.js': probe('/webpack.config.js', WEBPACK_CONFIG, 200, 'application/javascript'),
    })
    expect(r.status).toBe('fail')
    expect(r.severity).toBe('medium')
    expect(r.evidence.files).toMatchObject([
      { path: '/next.config.js', kind: 'next-config', keys: ['reactStrictMode', 'images', 'rewrites'] },
      { path: '/vite.config.js', kind: 'vite-config', keys: ['plugins', 'server'] },
      { path: '/webpack.config.js', kind: 'webpack-config', keys: ['mode', 'entry', 'output', 'module'] },
    ])
  })

  test('a docker-compose file with a literal password is high, showing names only', () => {
    const r = run({ '/docker-compose.yml': probe('/docker-compose.yml', COMPOSE, 200, 'application/yaml') })
    expect(r.status).toBe('fail')
    expect(r.severity).toBe('high')
    expect(r.evidence.files).toMatchObject([
      { path: '/docker-compose.yml', kind: 'docker-compose', services: ['web', 'db'], secretNames: ['POSTGRES_PASSWORD'] },
    ])
    expect(JSON.stringify(r)).not.toContain(DB_PASSWORD)
  })

  test('a docker-compose file taking secrets from the environment is medium', () => {
    const r = run({ '/docker-compose.yml': probe('/docker-compose.yml', COMPOSE.replace(DB_PASSWORD, '${POSTGRES_PASSWORD}')) })
    expect(r.severity).toBe('medium')
  })

  test('a wp-config.php backup with a database password is critical, values never shown', () => {
    const r = run({ '/wp-config.php.bak': probe('/wp-config.php.bak', WP_CONFIG, 200, 'application/octet-stream') })
    expect(r.status).toBe('fail')
    expect(r.severity).toBe('critical')
    expect(r.evidence.files).toMatchObject([
      {
        path: '/wp-config.php.bak',
        kind: 'wp-config',
        constants: ['DB_NAME', 'DB_USER', 'DB_PASSWORD', 'DB_HOST', 'AUTH_KEY'],
        databaseCredentials: true,
      },
    ])
    expect(JSON.stringify(r)).not.toContain(DB_PASSWORD)
    expect(r.summary).toContain('database credentials')
  })

  test('a wp-config backup with an empty password and placeholder keys is high', () => {
    expect(
      readWpConfig("<?php\ndefine('DB_NAME', 'wp');\ndefine('DB_PASSWORD', '');\ndefine('AUTH_KEY', 'put your unique phrase here');"),
    ).toMatchObject({ credentials: false })
    expect(
      run({ '/wp-config.php.bak': probe('/wp-config.php.bak', "<?php\ndefine('DB_NAME', 'wp');\ndefine('DB_PASSWORD', '');") }).severity,
    ).toBe('high')
  })

  test('passes index.html, a 404 page and the catch-all answer', () => {
    expect(run({ '/next.config.js': probe('/next.config.js', SPA_HTML, 200, 'text/html') }).status).toBe('pass')
    expect(
      run({
        '/wp-config.php.bak': probe(
          '/wp-config.php.bak',
          '<html><body><h1>404 Not Found</h1><p>wp-config.php.bak</p></body></html>',
          404,
          'text/html',
        ),
      }).status,
    ).toBe('pass')
    const catchAll = 'services:\n  web:\n    image: nginx\n'
    const r = exposedFrameworkConfig.run(
      makeArtifacts({
        probes: { [BASELINE_PROBE]: probe(BASELINE_PROBE, catchAll), '/docker-compose.yml': probe('/docker-compose.yml', catchAll) },
      }),
    )
    expect(r.status).toBe('pass')
  })

  test('passes JavaScript that is not a config and YAML without services', () => {
    expect(readJsConfig('next', 'export default function App() { return null }')).toBeNull()
    expect(readJsConfig('vite', '!function(){var a={};a.b=1}()')).toBeNull()
    expect(readJsConfig('webpack', 'module.exports = { name: "x" }')).toBeNull()
    expect(readCompose('name: app\nitems:\n  - a\n')).toBeNull()
    expect(readCompose('services:\n  - docs\n  - blog\n')).toBeNull()
    expect(readWpConfig('<?php echo "hello";')).toBeNull()
  })
})
