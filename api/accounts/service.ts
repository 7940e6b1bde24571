// An account as its owner's tools see it: plan, usage and the audit allowance.
import { getAccountSummary, type Principal } from '../../shared/db/accounts.ts'
import type { Database } from '../../shared/db/index.ts'
import { getBalance } from '../../shared/db/ledger.ts'

export class AccountService {
  constructor(private deps: { db: Database }) {}

  /** Scans, apps and keys counted, and this week's audit allowance and credits. */
  async summary(principal: Principal) {
    const usage = await getAccountSummary(this.deps.db.sql, principal.account.id)
    const balance = await getBalance(this.deps.db.sql, principal.account.id)
    return { usage, balance }
  }
}
