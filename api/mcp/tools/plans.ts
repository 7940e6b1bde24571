// Which plan includes which tool: the one place plan gating is decided.
import { PLANS, type Plan } from '../../../shared/db/accounts.ts'

export const planIncludes = (have: Plan, need: Plan) => PLANS.indexOf(have) >= PLANS.indexOf(need)
