// The ports of third-party servers: the one a server given port 0 got, read from the kernel, a socket bound on
// port 0 handed over to nginx, which only the child then accepts on, and a port held for apache2, which no
// other process can bind meanwhile.
import { afterAll, describe, expect, test } from 'bun:test'
import { spawn } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { until } from './wait.ts'
import { createServer } from 'node:net'
import { APACHE, apacheConfig } from './apache.ts'
import { boundPort, listenerForChild, listeningPorts, reservedPort, untilListening } from './ports.ts'

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

/** Resolves with the error code of listening on 127.0.0.1:port (reusePort as asked), or 'bound' (then closed). */
function tryListen(port: number, reusePort: boolean): Promise<string> {
  return new Promise((resolve) => {
    const server = createServer()
    server.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message))
    server.listen({ port, host: '127.0.0.1', reusePort }, () => server.close(() => resolve('bound')))
  })
}

describe('reservedPort', () => {
  test('while held, a bind without SO_REUSEPORT is refused; once released, the port is free', async () => {
    const hold = await reservedPort()
    expect(hold.port).toBeGreaterThan(0)
    expect(await tryListen(hold.port, false)).toBe('EADDRINUSE')
    // Another process (a shell-started Bun, as any server would be) is refused too.
    const other = Bun.spawnSync([
      process.execPath,
      '-e',
      `require('node:net').createServer().once('error', (e) => { console.log(e.code); process.exit(0) }).listen(${hold.port}, '127.0.0.1', () => { console.log('bound'); process.exit(0) })`,
    ])
    expect(other.stdout.toString().trim()).toBe('EADDRINUSE')
    await hold.release()
    await hold.release() // a second call is harmless
    expect(await tryListen(hold.port, false)).toBe('bound')
  })

  test.skipIf(!existsSync(APACHE))(
    'apache2 binds beside the hold and answers once it is released',
    async () => {
      const root = mkdtempSync(join(tmpdir(), 'appaudit-ports-'))
      stops.push(() => rmSync(root, { recursive: true, force: true }))
      const www = join(root, 'www')
      Bun.spawnSync(['mkdir', '-p', www])
      writeFileSync(join(www, 'index.html'), 'from apache')
      Bun.spawnSync(['chmod', '-R', '755', root])
      const hold = await reservedPort()
      stops.push(() => hold.release())
      const modules = ['mpm_event', 'authz_core', 'dir', 'mime']
      writeFileSync(join(root, 'httpd.conf'), apacheConfig({ root, port: hold.port, www, modules, server: ['DirectoryIndex index.html'] }))
      const apache = Bun.spawn([APACHE, '-f', join(root, 'httpd.conf'), '-DFOREGROUND'], { stdout: 'ignore', stderr: 'pipe' })
      stops.push(async () => {
        apache.kill()
        await apache.exited
      })
      await untilListening(apache.pid, hold.port, 10_000, 'apache2', () => apache.exitCode !== null)
      await hold.release()
      for (let i = 0; i < 10; i++) expect(await (await fetch(`http://127.0.0.1:${hold.port}/`)).text()).toBe('from apache')
      expect(listeningPorts(apache.pid)).toEqual([hold.port])
    },
    30_000,
  )

  test('untilListening gives up when the process stops, and at its deadline, and says which', async () => {
    const idle = Bun.spawn(['sleep', '30'])
    stops.push(() => idle.kill())
    await expect(untilListening(idle.pid, 1, 300, 'sleep')).rejects.toThrow('sleep does not listen on 127.0.0.1:1 after 300 ms')
    await expect(untilListening(idle.pid, 1, 10_000, 'sleep', () => true)).rejects.toThrow(
      'sleep stopped before it listened on 127.0.0.1:1',
    )
  })
})
