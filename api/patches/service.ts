// create_patch and connected repositories. A patch is built from a completed scan's or audit's findings
// (builder.ts) for the platform named, else the one the repository's files show, else the one the scan
// detected. With a connected repository (and `repository` not false) the job clones it, writes the patch on
// a new branch, pushes it and opens a pull request listing what it fixes and how to verify each fix.
// States: queued -> running -> ready | pr_opened | failed, read at /api/patches/{id}; the tool waits for
// the job up to PATCH_WAIT_MS and answers the state it reached.
import type { Config } from '../../shared/config.ts'
import { getAccount, type Plan, type Principal } from '../../shared/db/accounts.ts'
import { getAudit } from '../../shared/db/audits.ts'
import type { Database, Sql } from '../../shared/db/index.ts'
import { getScan } from '../../shared/db/scans.ts'
import { policyFromConfig } from '../../shared/egress/guard.ts'
import { AppError, errorMessage } from '../../shared/errors.ts'
import { newId } from '../../shared/lib/ids.ts'
import type { Logger } from '../../shared/lib/log.ts'
import { asPlatformSignals, detectFromSignals, signalsFromReport } from '../../shared/report/platform.ts'
import { SecretBox, SecretBoxError } from '../../shared/lib/secret-box.ts'
import {
  buildPatch,
  type PatchPlan,
  type PatchPlatform,
  type PatchSource,
  patchPlatformFor,
  platformFromRepo,
  type RepoView,
} from './builder.ts'
import type { RateLimiter } from '../http/rate-limit.ts'
import { planIncludes } from '../mcp/tools/plans.ts'
import { unifiedDiff } from './diff.ts'
import { JobSlots } from './slots.ts'
import { GitError, isSafeBranch, parseRepoUrl, Workspace } from './git.ts'
import {
  deleteConnection,
  getConnection,
  getPatch,
  insertPatch,
  type PatchRow,
  type RepoConnection,
  sealedToken,
  saveConnection,
  updatePatch,
} from './store.ts'

export const PATCH_LIMITS = {
  /** Patches queued or running at once per account. */
  inFlightPerAccount: 3,
  /** Jobs with a repository (clone, push, API call) one api process runs at once. */
  jobsPerProcess: 4,
  /** Of those, how many one account may hold: a slow host holds its own account's slot only. */
  jobsPerAccount: 1,

  /** How long create_patch waits for its job before answering the state it reached. */
  waitMs: 45_000,
  /** Largest diff kept; a larger one fails the patch. */
  maxDiffBytes: 256 * 1024,
} as const

/** The plan create_patch needs, and so connecting a repository. */
export const CREATE_PATCH_PLAN: Plan = 'scale'

/** The purpose a repository token is sealed for (bound as AES-GCM additional data). */
export const tokenPurpose = (accountId: string) => `repo-token:${accountId}`
const TOKEN = /^[\x21-\x7e]{8,4096}$/

export interface CreatePatchInput {
  scanId?: string
  auditId?: string
  platform?: PatchPlatform
  repository?: boolean
}

export class PatchService {
  private readonly slots = new JobSlots(PATCH_LIMITS.jobsPerProcess, PATCH_LIMITS.jobsPerAccount)
  readonly box: SecretBox | null

  constructor(private deps: { config: Config; db: Database; log: Logger; limiter?: RateLimiter }) {
    this.box = SecretBox.fromConfig(deps.config)
  }

  // -- connected repository (dashboard) ----------------------------------------------------------

  async connection(accountId: string): Promise<RepoConnection | null> {
    return getConnection(this.deps.db.sql, accountId)
  }

  /** Validates the URL and token, checks they reach the repository, and stores the token sealed. */
  async connect(accountId: string, raw: { url: unknown; token: unknown; baseBranch?: unknown }): Promise<RepoConnection> {
    if (!this.box) throw new AppError('invalid_params', 'This server has no SECRETS_KEY, so it cannot store a repository token.')
    if (typeof raw.url !== 'string' || typeof raw.token !== 'string')
      throw new AppError('invalid_params', 'url and token are required strings.')
    const parsed = parseRepoUrl(raw.url.trim(), this.deps.config.ALLOW_PRIVATE_TARGETS)
    if (typeof parsed === 'string') throw new AppError('invalid_params', `Repository URL: ${parsed}.`)
    const token = raw.token.trim()
    if (!TOKEN.test(token)) throw new AppError('invalid_params', 'The token must be 8 to 4096 printable characters without spaces.')
    if (raw.baseBranch !== undefined && (typeof raw.baseBranch !== 'string' || !isSafeBranch(raw.baseBranch)))
      throw new AppError('invalid_params', 'baseBranch is not a branch name.')
    await this.admitConnect(accountId)
    const url = parsed.url.href.replace(/\/+$/, '')
    let defaultBranch: string
    try {
      ;({ defaultBranch } = await Workspace.probe({ url, token }, policyFromConfig(this.deps.config)))
    } catch (e) {
      if (e instanceof GitError) throw new AppError('invalid_params', `The repository could not be reached with this token: ${e.message}`)
      throw e
    }
    const saved = await saveConnection(this.deps.db.sql, {
      id: newId('rep'),
      accountId,
      url,
      baseBranch: (raw.baseBranch as string | undefined) ?? defaultBranch,
      tokenSealed: this.box.seal(token, tokenPurpose(accountId)),
    })
    this.deps.log.info('repository connected', { accountId, repositoryId: saved.id, host: parsed.url.host })
    return saved
  }

  /**
   * A connect runs git against a host the caller chose, so it is for accounts whose plan can use a
   * repository (create_patch's plan), and a few an hour per account.
   */
  private async admitConnect(accountId: string): Promise<void> {
    const account = await getAccount(this.deps.db.sql, accountId)
    if (!account || !planIncludes(account.plan, CREATE_PATCH_PLAN))
      throw new AppError(
        'plan_required',
        `Pull requests from create_patch need the ${CREATE_PATCH_PLAN} plan; this account is on ${account?.plan ?? 'no plan'}.`,
        { requiredPlan: CREATE_PATCH_PLAN },
      )
    const decision = await this.deps.limiter?.hit('repositoryConnect', accountId)
    if (decision && !decision.ok)
      throw new AppError('rate_limited', 'Too many repository connects from this account; try again later.', {
        retryAfter: decision.retryAfterSeconds,
      })
  }

  async disconnect(accountId: string): Promise<boolean> {
    return deleteConnection(this.deps.db.sql, accountId)
  }

  // -- patches ------------------------------------------------------------------------------------

  async create(principal: Principal, input: CreatePatchInput, wait = PATCH_LIMITS.waitMs): Promise<unknown> {
    const { db } = this.deps
    const accountId = principal.account.id
    if ((input.scanId === undefined) === (input.auditId === undefined))
      throw new AppError('invalid_params', 'Pass exactly one of scanId and auditId.', {
        details: [{ path: '/scanId', message: 'scanId or auditId' }],
      })
    const source = await this.source(accountId, input)
    const repo = input.repository === false ? null : await getConnection(db.sql, accountId)
    const patch = await insertPatch(
      db.sql,
      {
        id: newId('pat'),
        accountId,
        sourceId: (input.scanId ?? input.auditId)!,
        platform: input.platform ?? 'auto',
        repositoryId: repo?.id ?? null,
      },
      PATCH_LIMITS.inFlightPerAccount,
    )
    if (!patch)
      throw new AppError(
        'rate_limited',
        `This account already has ${PATCH_LIMITS.inFlightPerAccount} patches in progress; retry when one is done.`,
        {
          retryAfter: 30,
          limit: PATCH_LIMITS.inFlightPerAccount,
        },
      )
    // Only a job that talks to a repository host waits for a slot; one without a repository is local work.
    const run = () => this.run(patch.id, accountId, source, input.platform, repo)
    const job = repo ? this.slots.run(accountId, run) : run()
    await Promise.race([job, new Promise((r) => setTimeout(r, wait).unref?.())])
    return this.view((await getPatch(db.sql, accountId, patch.id))!)
  }

  async get(accountId: string, id: string): Promise<unknown | null> {
    const row = await getPatch(this.deps.db.sql, accountId, id)
    return row ? this.view(row) : null
  }

  view(p: PatchRow) {
    return patchView(p, this.deps.config.baseUrl)
  }

  /** The findings a patch fixes, from a completed scan or audit of this account. */
  private async source(accountId: string, input: CreatePatchInput): Promise<PatchSource & { detected: PatchPlatform | null }> {
    const { sql } = this.deps.db
    if (input.scanId) {
      const scan = await getScan(sql, accountId, input.scanId)
      if (!scan) throw new AppError('not_found', `No scan ${input.scanId} in this account`)
      if (scan.status !== 'completed')
        throw new AppError('invalid_params', `Scan ${scan.id} is ${scan.status}; a patch needs a completed scan.`)
      const report = scan.report as {
        finalUrl?: string
        checks?: Array<{ id: string; title?: string; severity?: string; status: string; evidence?: Record<string, unknown> }>
      }
      const checks = report.checks ?? []
      const signals = asPlatformSignals(scan.platformSignals) ?? signalsFromReport(report)
      return {
        url: report.finalUrl || scan.url,
        findings: checks.map((c) => ({
          checkId: c.id,
          title: c.title ?? c.id,
          severity: c.severity ?? 'low',
          status: c.status,
          evidence: c.evidence ?? {},
        })),
        checks,
        detected: patchPlatformFor(detectFromSignals(signals).platform),
      }
    }
    const audit = await getAudit(sql, accountId, input.auditId!)
    if (!audit) throw new AppError('not_found', `No audit ${input.auditId} in this account`)
    if (audit.status !== 'completed')
      throw new AppError('invalid_params', `Audit ${audit.id} is ${audit.status}; a patch needs a completed audit.`)
    const result = audit.result as {
      findings?: Array<{ checkId: string; title?: string; severity?: string; status: string; evidence?: Record<string, unknown> }>
      pages?: Array<{ finalUrl?: string }>
    }
    const findings = (result.findings ?? []).map((f) => ({
      checkId: f.checkId,
      title: f.title ?? f.checkId,
      severity: f.severity ?? 'low',
      status: f.status,
      evidence: f.evidence ?? {},
    }))
    const checks = findings.map((f) => ({ id: f.checkId, status: f.status, evidence: f.evidence }))
    return {
      url: result.pages?.[0]?.finalUrl ?? audit.url,
      findings,
      checks,
      detected: patchPlatformFor(detectFromSignals(signalsFromReport({ checks })).platform),
    }
  }

  private async run(
    id: string,
    accountId: string,
    source: PatchSource & { detected: PatchPlatform | null },
    platformArg: PatchPlatform | undefined,
    repo: RepoConnection | null,
  ): Promise<void> {
    const { db, config } = this.deps
    const log = this.deps.log.child({ patchId: id })
    let ws: Workspace | null = null
    try {
      await updatePatch(db.sql, id, { status: 'running' })
      let view: RepoView | undefined
      if (repo) {
        const sealed = await sealedToken(db.sql, accountId, repo.id)
        if (!sealed || !this.box) throw new GitError('the connected repository has no usable token: connect it again', 'repository_refused')
        let token: string
        try {
          token = this.box.open(sealed, tokenPurpose(accountId))
        } catch (e) {
          if (e instanceof SecretBoxError)
            throw new GitError('the repository token cannot be decrypted with the configured key: connect it again', 'repository_refused')
          throw e
        }
        ws = await Workspace.open({ url: repo.url, token, baseBranch: repo.baseBranch }, policyFromConfig(config))
        view = await ws.view()
      }
      const platform = platformArg ?? (view ? platformFromRepo(view) : null) ?? source.detected
      if (!platform) {
        await updatePatch(db.sql, id, {
          status: 'failed',
          error: {
            code: 'invalid_params',
            message: 'The platform could not be detected from the scan or the repository: call create_patch again with platform.',
          },
        })
        return
      }
      const plan = buildPatch(platform, source, view)
      const diff = unifiedDiff(plan.edits)
      if (Buffer.byteLength(diff) > PATCH_LIMITS.maxDiffBytes)
        throw new GitError('the patch is larger than this service keeps', 'repository_refused')
      const result = summary(plan, view !== undefined)
      if (!ws || plan.edits.length === 0) {
        await updatePatch(db.sql, id, { status: 'ready', platform, diff, result })
        log.info('patch ready', { platform, files: plan.edits.length })
        return
      }
      const branch = `appaudit/fix-${id.slice(-10).toLowerCase()}`
      await updatePatch(db.sql, id, { status: 'running', platform, diff, result, branch })
      await ws.commitAndPush(
        plan.edits,
        branch,
        `Security headers and configuration fixes (App Audit ${source.findings.length ? id : ''})`.trim(),
      )
      const pr = await ws.openPullRequest(
        { title: prTitle(plan), body: prBody(plan, source.url, id), head: branch, base: repo!.baseBranch },
        { host: config.GITHUB_HOST, apiUrl: config.GITHUB_API_URL },
      )
      await updatePatch(db.sql, id, { status: 'pr_opened', pullRequest: pr })
      log.info('pull request opened', { platform, files: plan.edits.length, number: pr.number })
    } catch (e) {
      const error =
        e instanceof GitError
          ? { code: e.code, message: e.message }
          : { code: 'internal', message: 'The patch could not be built on our side.' }
      if (!(e instanceof GitError)) log.error('patch failed', { error: errorMessage(e) })
      else log.warn('patch failed', { code: e.code, error: e.message })
      await updatePatch(db.sql, id, { status: 'failed', error }).catch(() => {})
    } finally {
      await ws?.close()
    }
  }
}

/** What create_patch and /api/patches/{id} show of a patch. */
export function patchView(p: PatchRow, baseUrl: string) {
  return {
    patchId: p.id,
    status: p.status,
    source: p.sourceId,
    platform: p.platform,
    ...(p.result ?? {}),
    diff: p.diff,
    ...(p.branch ? { branch: p.branch } : {}),
    ...(p.pullRequest ? { pullRequest: p.pullRequest } : {}),
    ...(p.error ? { error: p.error } : {}),
    watch: `${baseUrl}/api/patches/${p.id}`,
    createdAt: p.createdAt,
    updatedAt: p.updatedAt,
  }
}

/** For the dashboard route: the account's patch, or null (another account's id reads as missing). */
export async function readPatch(sql: Sql, baseUrl: string, accountId: string, id: string) {
  const row = await getPatch(sql, accountId, id)
  return row ? patchView(row, baseUrl) : null
}

function summary(plan: PatchPlan, readRepository: boolean): Record<string, unknown> {
  const created = plan.edits.filter((e) => e.before === null).map((e) => e.path)
  // Without a repository the builder cannot see existing files: say so, since a diff that creates a file the
  // repository already has (vercel.json, netlify.toml, next.config.js) does not apply.
  const blind =
    !readRepository && created.length
      ? [
          `No repository was read, so this diff creates ${created.join(', ')}. If the repository already has ${created.length === 1 ? 'it' : 'them'}, connect the repository in the dashboard (Settings, Repository) to get a diff against its files, or merge these lines by hand.`,
        ]
      : []
  return {
    files: plan.edits.map((e) => ({ path: e.path, change: e.before === null ? 'created' : 'modified' })),
    fixed: plan.fixed,
    notFixed: plan.notFixed,
    notes: [...blind, ...plan.notes],
  }
}

function prTitle(plan: PatchPlan): string {
  return `Security headers and configuration fixes (${plan.fixed.length} finding${plan.fixed.length === 1 ? '' : 's'})`
}

/** Markdown: what is fixed and how to verify each fix, then what configuration cannot fix. Values are code spans. */
export function prBody(plan: PatchPlan, url: string, patchId: string): string {
  const code = (s: string) => `\`${s.replace(/`/g, "'").replace(/[\r\n]+/g, ' ')}\``
  const line = (s: string) => s.replace(/[\r\n]+/g, ' ')
  const out = [
    `This pull request fixes ${plan.fixed.length} finding(s) of the audit of ${code(url)} in the ${plan.platform} configuration.`,
    '',
    '## Fixed',
    '',
    ...plan.fixed.map((f) => `- **${line(f.title)}** (${code(f.checkId)}): ${line(f.change)}\n  - Verify: ${line(f.verify)}`),
  ]
  if (plan.notFixed.length)
    out.push(
      '',
      '## Not fixed by configuration',
      '',
      ...plan.notFixed.map((n) => `- **${line(n.title)}** (${code(n.checkId)}): ${line(n.why)}`),
    )
  if (plan.notes.length) out.push('', '## Before merging', '', ...plan.notes.map((n) => `- ${line(n)}`))
  out.push('', `Patch ${code(patchId)}.`)
  return out.join('\n').slice(0, 60_000)
}
