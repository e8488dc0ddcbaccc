/** Who made a change from the dashboard: a case given one writes the change's audit row in the same transaction. */
import type { Kysely } from 'kysely'
import { type AuditEntry, recordAudit } from '../storage/audit-repository.js'
import type { Database } from '../storage/tables.js'

export interface OperatorAudit {
  /** `account:<email>`, as the audit log names a signed-in operator. */
  actor: string
}

/** Writes `entry` as `audit`'s operator's, in the change's transaction `trx`; nothing when no operator made it. */
export async function auditOperator(
  trx: Kysely<Database>,
  audit: OperatorAudit | undefined,
  entry: Omit<AuditEntry, 'actor'>,
  now: number,
): Promise<void> {
  if (audit !== undefined) await recordAudit(trx, { actor: audit.actor, ...entry }, now)
}
