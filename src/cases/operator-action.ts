/**
 * The operator audit log's writes. A change writes its row in its own transaction, so no change
 * is without its row and no row without its change: a dashboard case given an operator calls
 * `auditOperator`, a CLI command runs its change through `auditedChange`. An action that changes
 * nothing (opening a child's disclosures, an export) writes its row alone (`auditAction`).
 */
import type { Kysely } from 'kysely'
import type { Clock } from '../clock.js'
import { type AuditEntry, recordAudit } from '../storage/audit-repository.js'
import type { Database } from '../storage/tables.js'
import { inTransaction } from '../storage/transaction.js'

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

/** Records an action that changed nothing, or a change committed by the caller's own transaction (`db`). */
export function auditAction(db: Kysely<Database>, entry: AuditEntry, now: number): Promise<void> {
  return recordAudit(db, entry, now)
}

/**
 * Runs `change` and then writes the row `entry` makes of its result, in one transaction (the
 * caller's, when `db` is one); the row's time is read after the change.
 */
export function auditedChange<T>(
  db: Kysely<Database>,
  change: (trx: Kysely<Database>) => Promise<T>,
  entry: (value: T) => AuditEntry,
  clock: Clock,
): Promise<T> {
  return inTransaction(db, async (trx) => {
    const value = await change(trx)
    await recordAudit(trx, entry(value), clock.now())
    return value
  })
}
