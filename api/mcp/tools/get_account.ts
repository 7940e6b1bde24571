import { Type } from '@sinclair/typebox'
import { planIncludes } from './plans.ts'
import { defineTool, readOnly } from './types.ts'
import { strict } from './schemas.ts'

export const getAccount = defineTool({
  name: 'get_account',
  description:
    'This account: its plan, what it has used, which tools the plan includes, and its monitors (monitor_app) with their last score and ' +
    'open regressions.',
  plan: 'free',
  annotations: readOnly('Get account'),
  input: Type.Object({}, strict),
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
