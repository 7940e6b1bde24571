// A real git host on loopback for the connected-repository tests: bare repositories served by
// `git http-backend` (the CGI git ships for smart HTTP) behind a small Bun server on port 0 that checks
// HTTP basic auth against one token, and, on another port, a stand-in for GitHub's REST
// "create a pull request" (POST /repos/{owner}/{repo}/pulls) that records each request and answers the
// documented 201 shape.
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const BACKEND = `${Bun.spawnSync(['git', '--exec-path']).stdout.toString().trim()}/git-http-backend`
const MAX_BODY = 32 * 1024 * 1024
const CGI_TIMEOUT_MS = 30_000

export function sh(cmd: string[], cwd: string): string {
  const p = Bun.spawnSync(cmd, { cwd, stdout: 'pipe', stderr: 'pipe', stdin: 'ignore' })
  if (p.exitCode !== 0) throw new Error(`${cmd.join(' ')}: ${p.stderr.toString()}`)
  return p.stdout.toString()
}

export interface GitHost {
  /** http://127.0.0.1:PORT */
  origin: string
  /** host:port, as GITHUB_HOST names it */
  host: string
  root: string
  /** Creates the bare repository owner/name.git holding `files` (a directory copied) on branch main. */
  createRepo(owner: string, name: string, files: string): string
  /** The bare repository's directory, for `git --git-dir` reads. */
  repoDir(owner: string, name: string): string
  /** Requests answered 401 (wrong or missing token). */
  refused: number
  stop(): Promise<void>
}

export async function startGitHost(token: string): Promise<GitHost> {
  const root = mkdtempSync(join(tmpdir(), 'git-host-'))
  const expected = `Basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}`
  const host = {
    refused: 0,
  }
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      if (req.headers.get('authorization') !== expected) {
        host.refused++
        return new Response('authentication required\n', { status: 401, headers: { 'www-authenticate': 'Basic realm="git"' } })
      }
      const url = new URL(req.url)
      const body = req.method === 'POST' ? new Uint8Array(await req.arrayBuffer()) : new Uint8Array()
      if (body.byteLength > MAX_BODY) return new Response('too large\n', { status: 413 })
      const env: Record<string, string> = {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: '1',
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_CONFIG_GLOBAL: '/dev/null',
        REQUEST_METHOD: req.method,
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.slice(1),
        CONTENT_TYPE: req.headers.get('content-type') ?? '',
        CONTENT_LENGTH: String(body.byteLength),
        // Set, it enables receive-pack (push) for this authenticated user.
        REMOTE_USER: 'x-access-token',
        REMOTE_ADDR: '127.0.0.1',
      }
      const enc = req.headers.get('content-encoding')
      if (enc) env.HTTP_CONTENT_ENCODING = enc
      const proto = req.headers.get('git-protocol')
      if (proto) env.GIT_PROTOCOL = proto
      const p = Bun.spawn([BACKEND], { env, stdin: body, stdout: 'pipe', stderr: 'pipe' })
      const timer = setTimeout(() => p.kill(), CGI_TIMEOUT_MS)
      try {
        const [out] = await Promise.all([new Response(p.stdout).arrayBuffer(), p.exited])
        return cgiResponse(new Uint8Array(out))
      } finally {
        clearTimeout(timer)
      }
    },
  })
  const repoDir = (owner: string, name: string) => join(root, owner, `${name}.git`)
  return {
    origin: `http://127.0.0.1:${server.port}`,
    host: `127.0.0.1:${server.port}`,
    root,
    get refused() {
      return host.refused
    },
    createRepo(owner, name, files) {
      const work = mkdtempSync(join(tmpdir(), 'git-host-work-'))
      try {
        cpSync(files, work, { recursive: true })
        sh(['git', 'init', '-q', '-b', 'main'], work)
        sh(['git', 'add', '-A'], work)
        sh(['git', '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'initial'], work)
        mkdirSync(join(root, owner), { recursive: true })
        sh(['git', 'clone', '-q', '--bare', work, repoDir(owner, name)], root)
      } finally {
        rmSync(work, { recursive: true, force: true })
      }
      return `http://127.0.0.1:${server.port}/${owner}/${name}.git`
    },
    repoDir,
    async stop() {
      server.stop(true)
      rmSync(root, { recursive: true, force: true })
    },
  }
}

/** A CGI answer (headers, blank line, body) as a Response; Status: sets the status. */
function cgiResponse(out: Uint8Array): Response {
  let end = -1
  let sep = 0
  for (let i = 0; i + 1 < out.length; i++) {
    if (out[i] === 10 && out[i + 1] === 10) {
      end = i
      sep = 2
      break
    }
    if (out[i] === 13 && out[i + 1] === 10 && out[i + 2] === 13 && out[i + 3] === 10) {
      end = i
      sep = 4
      break
    }
  }
  if (end < 0) return new Response('bad gateway\n', { status: 502 })
  const headers = new Headers()
  let status = 200
  for (const line of new TextDecoder().decode(out.subarray(0, end)).split(/\r?\n/)) {
    const i = line.indexOf(':')
    if (i < 0) continue
    const k = line.slice(0, i).trim()
    const v = line.slice(i + 1).trim()
    if (k.toLowerCase() === 'status') status = Number.parseInt(v, 10) || 200
    else headers.append(k, v)
  }
  return new Response(out.slice(end + sep).buffer as ArrayBuffer, { status, headers })
}

export interface PullRequestCall {
  method: string
  path: string
  headers: Record<string, string>
  body: any
}

export interface PullRequestApi {
  /** http://127.0.0.1:PORT, as GITHUB_API_URL names it */
  url: string
  calls: PullRequestCall[]
  stop(): Promise<void>
}

/**
 * GitHub's "Create a pull request": POST /repos/{owner}/{repo}/pulls with {title, head, base, body}, a
 * bearer token, answered 201 with the pull request (number, html_url, state, head/base refs...). A wrong
 * token is 401 {"message": "Bad credentials"}, as GitHub answers.
 */
export async function startPullRequestApi(token: string): Promise<PullRequestApi> {
  const calls: PullRequestCall[] = []
  let next = 1
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const url = new URL(req.url)
      const text = (await req.text()).slice(0, 1024 * 1024)
      let body: any = null
      try {
        body = JSON.parse(text)
      } catch {}
      calls.push({ method: req.method, path: url.pathname, headers: Object.fromEntries(req.headers), body })
      const m = /^\/repos\/([^/]+)\/([^/]+)\/pulls$/.exec(url.pathname)
      if (!m || req.method !== 'POST') return Response.json({ message: 'Not Found' }, { status: 404 })
      if (req.headers.get('authorization') !== `Bearer ${token}`) return Response.json({ message: 'Bad credentials' }, { status: 401 })
      if (!body || typeof body.title !== 'string' || typeof body.head !== 'string' || typeof body.base !== 'string')
        return Response.json({ message: 'Validation Failed' }, { status: 422 })
      const number = next++
      const html = `https://github.example/${m[1]}/${m[2]}/pull/${number}`
      return Response.json(
        {
          id: 1000 + number,
          number,
          state: 'open',
          url: `${url.origin}/repos/${m[1]}/${m[2]}/pulls/${number}`,
          html_url: html,
          title: body.title,
          body: body.body ?? null,
          head: { ref: body.head },
          base: { ref: body.base },
        },
        { status: 201 },
      )
    },
  })
  return { url: `http://127.0.0.1:${server.port}`, calls, stop: async () => void server.stop(true) }
}
