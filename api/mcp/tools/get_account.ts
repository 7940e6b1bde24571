import { Type } from '@sinclair/typebox'
import { PLANS } from '../../../shared/db/accounts.ts'
import { planIncludes } from './plans.ts'
import { defineTool, readOnly } from './types.ts'
import { strict } from './schemas.ts'

const Plan = Type.Union(PLANS.map((p) => Type.Literal(p)))

export const getAccount = defineTool({
  name: 'get_account',
  description: 'This account: plan, usage, audit allowance and credits, the tools its plan includes, its monitors with open regressions.',
  plan: 'free',
  annotations: readOnly('Get account'),
  input: Type.Object({}, strict),
  output: Type.Object(
    {
      id: Type.String(),
      plan: Plan,
      createdAt: Type.String(),
      authenticatedWith: Type.Union([Type.Literal('api_key'), Type.Literal('oauth'), Type.Literal('session')]),
      usage: Type.Object({ scans: Type.Integer(), apps: Type.Integer(), activeApiKeys: Type.Integer(), monitors: Type.Integer() }),
      audits: Type.Object({
        weeklyAllowance: Type.Integer(),
        usedThisWeek: Type.Integer(),
        credits: Type.Integer(),
        resetsAt: Type.String(),
      }),
      tools: Type.Object({ included: Type.Array(Type.String()), needsUpgrade: Type.Array(Type.Unknown()) }),
      monitors: Type.Array(Type.Unknown()),
    },
    {
      description:
        'needsUpgrade: name, requiredPlan. monitors (the newest 50): monitorId, url, schedule, hour, weekday, notifyOn, ' +
        'enabled, lastRunAt, nextRunAt, lastScore, openRegressions.',
    },
  ),
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
