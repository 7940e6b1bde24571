// Monitors from the tools' side (monitor_app, get_account), on plain values: check the target, merge a call's
// arguments into the app's monitor, remove it, describe the account's monitors. The cron job's side, which
// runs them, is runner.ts.
import { createHash } from 'node:crypto'
import type { Plan, Principal } from '../../shared/db/accounts.ts'
import {
  deleteMonitorByOrigin,
  findMonitorByOrigin,
  listMonitors,
  type MonitorRow,
  type MonitorSettings,
  type NotifyOn,
  type Schedule,
  saveMonitor,
} from '../../shared/db/monitors.ts'
import { parseTargetUrl } from '../../shared/egress/guard.ts'
import { AppError } from '../../shared/errors.ts'
import type { Config } from '../../shared/config.ts'
import { Reachability } from '../http/reachable.ts'
import { checkTarget } from '../http/target.ts'
import { MONITOR_LIMITS, type MonitorDeps, type MonitorLimits, type MonitorRunResult, runDueMonitors } from './runner.ts'

export interface MonitorInput {
  url: string
  schedule?: Schedule
  hour?: number
  weekday?: number
  notifyOn?: NotifyOn
  enabled?: boolean
  remove?: boolean
}

/** get_account lists at most this many monitors (the newest); `usage.monitors` counts them all. */
export const LISTED_MONITORS = 50

/**
 * A stable hour and weekday derived from the URL: monitors created without an hour spread over the day
 * (and the week) instead of all starting at midnight, and the same URL always lands on the same slot.
 */
export function defaultSlot(url: string): { hour: number; weekday: number } {
  const h = createHash('sha256').update(url).digest()
  return { hour: h.readUInt32BE(0) % 24, weekday: h.readUInt32BE(4) % 7 }
}

/** The refusal of one monitor more than the plan keeps: a higher plan keeps more, the highest does not. */
function monitorCapReached(plan: Plan, max: number): AppError {
  const message = `This account has ${max} monitors, the most the ${plan} plan keeps; remove one (monitor_app with remove: true)`
  return plan === 'scale'
    ? new AppError('rate_limited', `${message}.`, { limit: max })
    : new AppError('plan_required', `${message} or move to the scale plan.`, { requiredPlan: 'scale', currentPlan: plan, limit: max })
}

const invalid = (path: string, message: string) =>
  new AppError('invalid_params', `Invalid arguments for monitor_app: ${path} ${message}`, { details: [{ path, message }] })

/**
 * What to store for a call, given the app's current monitor: what the call names replaces what is stored,
 * what it leaves out is kept (defaults on creation). So `{url, enabled: false}` pauses a monitor without
 * restating its schedule, and the same call twice leaves the same monitor.
 */
export function mergeSettings(current: MonitorRow | null, input: MonitorInput, url: string): MonitorSettings {
  const schedule = input.schedule ?? current?.schedule
  if (!schedule) throw invalid('/schedule', "is required when the app has no monitor yet: 'daily' or 'weekly'")
  if (schedule === 'daily' && input.weekday !== undefined)
    throw invalid('/weekday', "applies to a weekly schedule only; send schedule 'weekly'")
  const slot = defaultSlot(url)
  return {
    url,
    schedule,
    hour: input.hour ?? current?.hour ?? slot.hour,
    weekday: schedule === 'weekly' ? (input.weekday ?? current?.weekday ?? slot.weekday) : null,
    notifyOn: input.notifyOn ?? current?.notifyOn ?? 'regression',
    enabled: input.enabled ?? current?.enabled ?? true,
  }
}

const iso = (d: Date | null) => (d ? d.toISOString() : null)

/** A monitor as the tools show it; a paused monitor has no next run. */
export function monitorView(m: MonitorRow) {
  return {
    monitorId: m.id,
    url: m.url,
    origin: new URL(m.url).origin,
    appId: m.appId,
    schedule: m.schedule,
    hour: m.hour,
    weekday: m.weekday,
    notifyOn: m.notifyOn,
    enabled: m.enabled,
    nextRunAt: m.enabled ? iso(m.nextRunAt) : null,
    lastRunAt: iso(m.lastRunAt),
    lastScanId: m.lastScanId,
    createdAt: iso(m.createdAt),
    updatedAt: iso(m.updatedAt),
  }
}

/**
 * Monitors one account may keep, by plan (each one is also an app): the cron job's runs are shared by every
 * account, so one account cannot queue more than a plan's worth of them.
 */
export const MONITORS_PER_PLAN: Record<Plan, number> = { free: 0, launch: 25, scale: 100 }

export class MonitorService {
  private readonly reach: Reachability

  constructor(private readonly deps: MonitorDeps & { config: Pick<Config, 'PROBE_TIMEOUT_MS'> }) {
    this.reach = new Reachability(deps.config)
  }

  /**
   * Creates or updates the monitor of the URL's app. The target is checked as scan_app checks it; a new
   * monitor also needs the site to answer once (so no one fills the schedule with addresses where nothing
   * runs) and room under the plan's MONITORS_PER_PLAN.
   */
  async save(principal: Principal, input: MonitorInput) {
    const url = await checkTarget(this.deps.config, input.url, { refuseUnreachable: true })
    const { sql } = this.deps.db
    const accountId = principal.account.id
    if (!(await findMonitorByOrigin(sql, accountId, url.origin))) {
      mergeSettings(null, input, url.href) // argument errors first, before anything is asked of the site
      await this.reach.require(url, 'no monitor was saved: a monitor needs a site that answers')
    }
    const plan = principal.account.plan
    const saved = await saveMonitor(sql, accountId, url.origin, (current) => mergeSettings(current, input, url.href), {
      max: MONITORS_PER_PLAN[plan],
      refused: (max) => monitorCapReached(plan, max),
    })
    if (saved.changed) this.deps.log.info('monitor saved', { accountId, monitorId: saved.monitor.id, created: saved.created })
    return { ...monitorView(saved.monitor), created: saved.created, changed: saved.changed }
  }

  /**
   * Removes the monitor of the URL's app with its run history (the scans stay in scan_history). The URL is
   * only parsed, never resolved: a monitor of a site that is gone can still be removed. Removing what is not
   * there answers removed: false, so a repeated call is harmless.
   */
  async remove(principal: Principal, input: MonitorInput) {
    const extra = (['schedule', 'hour', 'weekday', 'notifyOn', 'enabled'] as const).find((k) => input[k] !== undefined)
    if (extra) throw invalid(`/${extra}`, 'cannot be sent with remove: true')
    const parsed = parseTargetUrl(input.url)
    if (!parsed.ok) throw new AppError('invalid_url', parsed.message)
    const origin = parsed.url.origin
    const removed = await deleteMonitorByOrigin(this.deps.db.sql, principal.account.id, origin)
    if (removed) this.deps.log.info('monitor removed', { accountId: principal.account.id, origin })
    return { origin, removed }
  }

  /** The account's monitors for get_account: schedule, state, last score and open regressions. */
  async list(principal: Principal) {
    const { total, items } = await listMonitors(this.deps.db.sql, principal.account.id, LISTED_MONITORS)
    return {
      total,
      items: items.map((m) => ({
        monitorId: m.id,
        url: m.url,
        origin: m.origin,
        schedule: m.schedule,
        hour: m.hour,
        weekday: m.weekday,
        notifyOn: m.notifyOn,
        enabled: m.enabled,
        lastRunAt: iso(m.lastRunAt),
        nextRunAt: m.enabled ? iso(m.nextRunAt) : null,
        lastScore: m.lastScore,
        lastGrade: m.lastGrade,
        openRegressions: m.openRegressions,
      })),
    }
  }

  /** The /api/cron/monitors job (runner.ts). */
  runDue(limits: MonitorLimits = MONITOR_LIMITS): Promise<MonitorRunResult> {
    return runDueMonitors(this.deps, limits)
  }
}
