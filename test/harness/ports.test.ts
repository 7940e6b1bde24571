// The ports of third-party servers: the one a server given port 0 got, read from the kernel, and a socket
// bound on port 0 handed over to nginx, which only the child then accepts on.
import { afterAll, describe, expect, test } from 'bun:test'
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { until } from './wait.ts'
import { boundPort, listenerForChild, listeningPorts } from './ports.ts'

const NGINX = '/usr/sbin/nginx'
const stops: Array<() => unknown> = []
afterAll(async () => {
  for (const stop of stops.splice(0)) await stop()
})

/** A Bun server on port 0 in a child of a shell (so the listener is a descendant), in a group of its own. */
function serverUnderShell(): number {
  const script = `Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('from the child') })`
  const shell = spawn('sh', ['-c', `"${process.execPath}" -e "${script}"; exit 0`], { stdio: 'ignore', detached: true })
  stops.push(() => process.kill(-shell.pid!, 'SIGKILL'))
  return shell.pid!
}

describe('listeningPorts and boundPort', () => {
  test('find the port a process below the given one bound on 127.0.0.1, and it is that server', async () => {
    const shell = serverUnderShell()
    const port = await boundPort(shell, 20_000, 'the child server')
    expect(listeningPorts(shell)).toEqual([port])
    expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe('from the child')
    // A process with no socket of its own or below it has none.
    const idle = Bun.spawn(['sleep', '30'])
    stops.push(() => idle.kill())
    expect(listeningPorts(idle.pid)).toEqual([])
  }, 30_000)

  test('a process that never binds: boundPort gives up at its deadline and says so', async () => {
    const idle = Bun.spawn(['sleep', '30'])
    stops.push(() => idle.kill())
    await expect(boundPort(idle.pid, 300, 'sleep')).rejects.toThrow('sleep listens on no port of 127.0.0.1 after 300 ms')
  })
})

describe.skipIf(!existsSync(NGINX))('listenerForChild', () => {
  test('nginx adopts the socket as its fd 3, and only nginx answers on its port', async () => {
    const root = mkdtempSync(join(tmpdir(), 'appaudit-ports-'))
    stops.push(() => rmSync(root, { recursive: true, force: true }))
    const socket = listenerForChild()
    writeFileSync(
      join(root, 'nginx.conf'),
      `pid ${root}/nginx.pid; error_log stderr notice; daemon off; events {}
http { access_log off; client_body_temp_path ${root}; server { listen 127.0.0.1:${socket.port}; location / { return 200 "from nginx"; } } }`,
    )
    const nginx = Bun.spawn([NGINX, '-c', join(root, 'nginx.conf'), '-p', root, '-e', 'stderr'], {
      stdio: ['ignore', 'ignore', 'pipe', socket.fd],
      env: { ...process.env, NGINX: '3;' },
    })
    socket.close()
    stops.push(async () => {
      nginx.kill()
      await nginx.exited
    })
    await until(async () => (await fetch(`http://127.0.0.1:${socket.port}/`).catch(() => null)) !== null, 10_000, 'nginx to answer')
    // Every answer is nginx's, on the port this process bound.
    for (let i = 0; i < 20; i++) expect(await (await fetch(`http://127.0.0.1:${socket.port}/`)).text()).toBe('from nginx')
    expect(listeningPorts(nginx.pid)).toEqual([socket.port])
    nginx.kill()
    await nginx.exited
    expect(await new Response(nginx.stderr).text()).toContain('using inherited sockets from "3;"')
  }, 30_000)
})
