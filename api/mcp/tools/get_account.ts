import { Type } from '@sinclair/typebox'
import { PLANS } from '../../../shared/db/accounts.ts'
import { planIncludes } from './plans.ts'
import { defineTool, readOnly } from './types.ts'
import { Nullable, strict, When } from './schemas.ts'

const Plan = Type.Union(PLANS.map((p) => Type.Literal(p)))

const Monitor = Type.Object({
  monitorId: Type.String(),
  url: Type.String(),
  origin: Type.String(),
  schedule: Type.Union([Type.Literal('daily'), Type.Literal('weekly')]),
  hour: Type.Integer(),
  weekday: Nullable(Type.Integer()),
  notifyOn: Type.Union([Type.Literal('regression'), Type.Literal('any')]),
  enabled: Type.Boolean(),
  lastRunAt: Nullable(When('The last run')),
  nextRunAt: Nullable(When('The next run; null while paused')),
  lastScore: Nullable(Type.Integer()),
  lastGrade: Nullable(Type.String()),
  openRegressions: Type.Integer(),
})

export const getAccount = defineTool({
  name: 'get_account',
  description:
    'This account: its plan, what it has used, which tools the plan includes, and its monitors (monitor_app) with their last score and ' +
    'open regressions.',
  plan: 'free',
  annotations: readOnly('Get account'),
  input: Type.Object({}, strict),
  output: Type.Object({
    id: Type.String(),
    plan: Plan,
    createdAt: When('When the account was created'),
    authenticatedWith: Type.Union([Type.Literal('api_key'), Type.Literal('oauth'), Type.Literal('session')]),
    usage: Type.Object({ scans: Type.Integer(), apps: Type.Integer(), activeApiKeys: Type.Integer(), monitors: Type.Integer() }),
    audits: Type.Object({
      weeklyAllowance: Type.Integer(),
      usedThisWeek: Type.Integer(),
      credits: Type.Integer(),
      resetsAt: When('When the weekly allowance starts again'),
    }),
    tools: Type.Object({
      included: Type.Array(Type.String()),
      needsUpgrade: Type.Array(Type.Object({ name: Type.String(), requiredPlan: Plan })),
    }),
    monitors: Type.Array(Monitor, { description: 'The newest 50; usage.monitors counts them all.' }),
  }),
  run: async (_input, ctx) => {
    const { account, kind } = ctx.principal
    const { usage, balance } = await ctx.services.accounts.summary(ctx.principal)
    const monitors = await ctx.services.monitors.list(ctx.principal)
    return {
      id: account.id,
      plan: account.plan,
      createdAt: account.createdAt,
      authenticatedWith: kind,
      usage: { scans: usage.scans, apps: usage.apps, activeApiKeys: usage.keys, monitors: monitors.total },
      audits: { weeklyAllowance: balance.allowance, usedThisWeek: balance.used, credits: balance.credits, resetsAt: balance.resetsAt },
      tools: {
        included: ctx.tools.filter((t) => planIncludes(account.plan, t.plan)).map((t) => t.name),
        needsUpgrade: ctx.tools.filter((t) => !planIncludes(account.plan, t.plan)).map((t) => ({ name: t.name, requiredPlan: t.plan })),
      },
      // The newest 50; usage.monitors counts them all.
      monitors: monitors.items,
    }
  },
})
