// A connected repository seen through git: a shallow clone into a temporary directory, a RepoView over its
// files, the patch written and committed on a new branch, pushed, and a pull request opened through the
// hosting provider's REST API (GitHub's POST /repos/{owner}/{repo}/pulls; GitHub Enterprise Server's
// {origin}/api/v3 for other hosts).
//
// Every connection (git's and the API call) goes through an egress proxy with the service's target
// policy, so a repository URL on a private address is refused exactly like a scan target. The token
// reaches git only through GIT_CONFIG_* environment variables (never argv, never .git/config, never a
// URL), git runs without hooks, prompts, redirects or protocols other than http(s), and files read from the
// clone are plain files inside it (symlinks are not followed).
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import type { EgressPolicy } from '../../shared/egress/guard.ts'
import { startEgressProxy, type EgressProxy } from '../../shared/egress/proxy.ts'
import { type FileEdit, isSafePath, type RepoView } from './plan.ts'
import { errorMessage } from '../../shared/errors.ts'
import { readCappedText } from '../../shared/lib/http-body.ts'

export class GitError extends Error {
  constructor(
    message: string,
    readonly code: 'repository_unreachable' | 'repository_refused' | 'pull_request_failed' = 'repository_unreachable',
  ) {
    super(message)
  }
}

export interface RepoTarget {
  /** The repository's URL without credentials, e.g. https://github.com/acme/site.git */
  url: string
  token: string
  baseBranch: string
}

/**
 * How long git may take. A whole command (clone, push, ls-remote) is killed after `commandMs`, with every
 * process it started (git runs its transport helpers, git-remote-http, as children: the whole process group
 * goes); a transfer slower than `lowSpeedBytes` a second for `lowSpeedSeconds` is abandoned by git itself
 * (http.lowSpeedLimit/lowSpeedTime), so a host that trickles bytes fails in seconds, not at the deadline.
 */
export interface GitLimits {
  commandMs: number
  lowSpeedBytes: number
  lowSpeedSeconds: number
}

export const GIT_LIMITS: GitLimits = { commandMs: 60_000, lowSpeedBytes: 1_000, lowSpeedSeconds: 20 }
const MAX_FILES = 20_000
const MAX_FILE_BYTES = 512 * 1024
const REPO_PART = /^[A-Za-z0-9._-]{1,100}$/
const BRANCH = /^[A-Za-z0-9._/-]{1,100}$/

/** Validates a repository URL: http(s), no credentials, query or fragment, path /owner/name(.git). */
export function parseRepoUrl(raw: string, allowHttp: boolean): { url: URL; owner: string; name: string } | string {
  let u: URL
  try {
    u = new URL(raw)
  } catch {
    return 'not a URL'
  }
  if (u.protocol !== 'https:' && !(allowHttp && u.protocol === 'http:')) return 'the repository URL must be https'
  if (u.username || u.password) return 'put the token in the token field, not in the URL'
  if (u.search || u.hash) return 'the repository URL takes no query or fragment'
  const parts = u.pathname.replace(/\/+$/, '').split('/').filter(Boolean)
  if (parts.length !== 2) return 'the repository URL must be https://host/owner/name(.git)'
  const owner = parts[0]!
  const name = parts[1]!.replace(/\.git$/, '')
  if (!REPO_PART.test(owner) || !REPO_PART.test(name) || name === '.' || name === '..')
    return 'the owner or name has characters git hosts do not use'
  return { url: u, owner, name }
}

export const isSafeBranch = (b: string) =>
  BRANCH.test(b) && !b.includes('..') && !b.startsWith('/') && !b.endsWith('/') && !b.endsWith('.lock')

/** Which GitHub answers the REST API for which host (GITHUB_HOST, GITHUB_API_URL). */
export interface GithubApi {
  host: string
  apiUrl: string
}

/**
 * The REST base of the repository's host: GITHUB_API_URL for repositories on GITHUB_HOST (github.com and
 * api.github.com by default), else that host's GitHub Enterprise Server path. The token is sent only to the
 * API paired with the host the repository lives on, never to another host's API.
 */
export function apiBaseFor(repo: URL, github: GithubApi = { host: 'github.com', apiUrl: 'https://api.github.com' }): string {
  return repo.host.toLowerCase() === github.host.toLowerCase() ? github.apiUrl.replace(/\/+$/, '') : `${repo.origin}/api/v3`
}

export class Workspace {
  readonly dir: string
  private proxy: EgressProxy | null = null

  private constructor(
    private readonly target: RepoTarget,
    private readonly limits: GitLimits,
  ) {
    this.dir = mkdtempSync(join(tmpdir(), 'appaudit-patch-'))
  }

  /** Clones the repository's base branch (depth 1). Always close() the workspace. */
  static async open(target: RepoTarget, policy: EgressPolicy, limits = GIT_LIMITS): Promise<Workspace> {
    const ws = new Workspace(target, limits)
    try {
      ws.proxy = await startEgressProxy(policy)
      await ws.git(['clone', '--quiet', '--depth', '1', '--single-branch', '--branch', target.baseBranch, '--', target.url, 'repo'], ws.dir)
      return ws
    } catch (e) {
      await ws.close()
      throw e
    }
  }

  /**
   * Checks that the URL and token reach the repository (git ls-remote through the egress proxy) and returns
   * its default branch. Nothing is cloned.
   */
  static async probe(
    target: Omit<RepoTarget, 'baseBranch'>,
    policy: EgressPolicy,
    limits = GIT_LIMITS,
  ): Promise<{ defaultBranch: string }> {
    const ws = new Workspace({ ...target, baseBranch: 'main' }, limits)
    try {
      ws.proxy = await startEgressProxy(policy)
      const out = await ws.git(['ls-remote', '--symref', '--', target.url, 'HEAD'], ws.dir)
      const m = /^ref: refs\/heads\/(\S+)\s+HEAD$/m.exec(out)
      const branch = m?.[1] ?? 'main'
      if (!isSafeBranch(branch)) throw new GitError('the default branch has a name this service does not push to', 'repository_refused')
      return { defaultBranch: branch }
    } finally {
      await ws.close()
    }
  }

  get repoDir(): string {
    return join(this.dir, 'repo')
  }

  private env(): Record<string, string> {
    const basic = Buffer.from(`x-access-token:${this.target.token}`).toString('base64')
    const config: Array<[string, string]> = [
      ['http.extraHeader', `Authorization: Basic ${basic}`],
      ['http.proxy', this.proxy!.url],
      ['http.followRedirects', 'false'],
      ['http.lowSpeedLimit', String(this.limits.lowSpeedBytes)],
      ['http.lowSpeedTime', String(this.limits.lowSpeedSeconds)],
      ['core.hooksPath', '/dev/null'],
      ['credential.helper', ''],
      ['protocol.allow', 'never'],
      ['protocol.https.allow', 'always'],
      ['protocol.http.allow', 'always'],
      ['user.name', 'App Audit'],
      ['user.email', 'patches@appaudit.invalid'],
      ['commit.gpgSign', 'false'],
    ]
    const env: Record<string, string> = {
      // git finds its helpers by its exec path; PATH is only for what a helper might start.
      PATH: '/usr/local/bin:/usr/bin:/bin',
      HOME: this.dir,
      GIT_TERMINAL_PROMPT: '0',
      GIT_ASKPASS: '/bin/false',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_ALLOW_PROTOCOL: 'https:http',
      GIT_CONFIG_COUNT: String(config.length),
      NO_PROXY: '',
      no_proxy: '',
    }
    config.forEach(([k, v], i) => {
      env[`GIT_CONFIG_KEY_${i}`] = k
      env[`GIT_CONFIG_VALUE_${i}`] = v
    })
    return env
  }

  /**
   * Runs git; a failure is a GitError whose message never holds the token. git runs in a process group of
   * its own, and at the deadline the whole group is killed and the call fails at once, whatever its pipes do
   * (a helper that outlived git would otherwise hold stdout open).
   */
  async git(args: string[], cwd = this.repoDir): Promise<string> {
    const p = Bun.spawn(['git', ...args], {
      cwd,
      env: this.env(),
      stdout: 'pipe',
      stderr: 'pipe',
      stdin: 'ignore',
      detached: true,
    })
    let timer: ReturnType<typeof setTimeout> | undefined
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        killGroup(p.pid)
        reject(new GitError(`git ${args[0]}: the host did not finish within ${Math.round(this.limits.commandMs / 1000)} s`))
      }, this.limits.commandMs)
    })
    try {
      const [out, err, code] = await Promise.race([
        Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]),
        deadline,
      ])
      if (code !== 0) throw this.failure(args[0]!, err)
      return out
    } finally {
      clearTimeout(timer)
      // Whatever git left behind (a helper still connected) goes with it.
      killGroup(p.pid)
    }
  }

  /** What a failed git command says, without the token. */
  private failure(command: string, err: string): GitError {
    // An HTTP 401 makes git ask for a user name, which GIT_ASKPASS=/bin/false refuses: say what happened.
    if (/could not read (Username|Password)|askpass|Authentication failed/i.test(err))
      return new GitError(
        `git ${command}: the host refused the token (HTTP 401); check that it is valid and may read and push this repository`,
        'repository_refused',
      )
    if (/too slow|low speed|Operation too slow/i.test(err))
      return new GitError(
        `git ${command}: the host sent less than ${this.limits.lowSpeedBytes} bytes a second for ${this.limits.lowSpeedSeconds} s`,
      )
    const line =
      this.scrub(err)
        .split('\n')
        .find((l) => /fatal|error|denied|rejected|refused|403|401|404/i.test(l)) ?? 'git failed'
    const refused = /40[13]|denied|authenticat|rejected|refused/i.test(err)
    return new GitError(`git ${command}: ${line.trim().slice(0, 300)}`, refused ? 'repository_refused' : 'repository_unreachable')
  }

  private scrub(s: string): string {
    const basic = Buffer.from(`x-access-token:${this.target.token}`).toString('base64')
    return s.split(this.target.token).join('[token]').split(basic).join('[token]')
  }

  /** The clone as the patch builder reads it: plain files only, bounded in count and size. */
  async view(): Promise<RepoView> {
    const listed = (await this.git(['ls-files', '-z']))
      .split('\0')
      .filter((p) => p && isSafePath(p))
      .slice(0, MAX_FILES)
    const root = this.repoDir
    return {
      paths: listed,
      read: (path: string) => {
        if (!isSafePath(path) || !this.plainPath(path)) return null
        try {
          const st = lstatSync(join(root, path))
          if (!st.isFile() || st.size > MAX_FILE_BYTES) return null
          return readFileSync(join(root, path), 'utf8')
        } catch {
          return null
        }
      },
    }
  }

  /** No component of the path is a symbolic link (so nothing is read or written outside the clone). */
  private plainPath(path: string): boolean {
    const parts = path.split('/')
    for (let i = 1; i < parts.length; i++) {
      try {
        if (lstatSync(join(this.repoDir, ...parts.slice(0, i))).isSymbolicLink()) return false
      } catch {
        return true // a directory the patch creates
      }
    }
    return true
  }

  /** Writes the edits, commits them on `branch` and pushes it. Returns the commit id. */
  async commitAndPush(edits: readonly FileEdit[], branch: string, message: string): Promise<string> {
    if (!isSafeBranch(branch)) throw new GitError('unsafe branch name', 'repository_refused')
    for (const e of edits) {
      if (!isSafePath(e.path) || !this.plainPath(e.path)) throw new GitError(`refused to write ${e.path}`, 'repository_refused')
      const full = join(this.repoDir, e.path)
      try {
        if (lstatSync(full).isSymbolicLink()) throw new GitError(`refused to write through a symlink: ${e.path}`, 'repository_refused')
      } catch (err) {
        if (err instanceof GitError) throw err
      }
      mkdirSync(dirname(full), { recursive: true })
      writeFileSync(full, e.after)
    }
    await this.git(['checkout', '--quiet', '-b', branch])
    await this.git(['add', '--', ...edits.map((e) => e.path)])
    await this.git(['commit', '--quiet', '--no-verify', '-m', message])
    await this.git(['push', '--quiet', 'origin', `HEAD:refs/heads/${branch}`])
    return (await this.git(['rev-parse', 'HEAD'])).trim()
  }

  /** Opens the pull request (GitHub's REST shape) through the egress proxy. */
  async openPullRequest(
    pr: { title: string; body: string; head: string; base: string },
    github?: GithubApi,
  ): Promise<{ number: number; url: string }> {
    const parsed = parseRepoUrl(this.target.url, true)
    if (typeof parsed === 'string') throw new GitError(parsed, 'pull_request_failed')
    const endpoint = `${apiBaseFor(parsed.url, github)}/repos/${parsed.owner}/${parsed.name}/pulls`
    let res: Response
    try {
      res = await fetch(endpoint, {
        method: 'POST',
        headers: {
          accept: 'application/vnd.github+json',
          authorization: `Bearer ${this.target.token}`,
          'x-github-api-version': '2022-11-28',
          'content-type': 'application/json',
          'user-agent': 'AppAudit',
        },
        body: JSON.stringify(pr),
        redirect: 'manual',
        proxy: this.proxy!.url,
        signal: AbortSignal.timeout(20_000),
      })
    } catch (e) {
      throw new GitError(`the pull request could not be opened: ${this.scrub(errorMessage(e)).slice(0, 200)}`, 'pull_request_failed')
    }
    const text = (await readCappedText(res.body, 64 * 1024).catch(() => ({ text: '' }))).text
    if (res.status !== 201) {
      let msg = ''
      try {
        msg = String(JSON.parse(text).message ?? '')
      } catch {}
      throw new GitError(
        `the host answered ${res.status} to the pull request${msg ? `: ${this.scrub(msg).slice(0, 200)}` : ''}`,
        'pull_request_failed',
      )
    }
    try {
      const body = JSON.parse(text) as { number?: unknown; html_url?: unknown }
      if (typeof body.number !== 'number' || typeof body.html_url !== 'string' || !/^https?:\/\//.test(body.html_url)) throw new Error()
      return { number: body.number, url: body.html_url.slice(0, 2048) }
    } catch {
      throw new GitError('the host answered 201 without a pull request number and URL', 'pull_request_failed')
    }
  }

  async close(): Promise<void> {
    await this.proxy?.stop().catch(() => {})
    rmSync(this.dir, { recursive: true, force: true })
  }
}

/** Kills a process group (git and every helper it started); a group already gone is no error. */
function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL')
  } catch {}
}
