/**
 * The operator audit log's writes. A change writes its row in the same transaction as itself
 * (`auditedChange`), so no change is without its row and no row without its change; an action
 * that changes nothing (opening a child's disclosures, an export) writes its row alone.
 */
import type { Kysely } from 'kysely'
import type { Clock } from '../clock.js'
import { type AuditEntry, recordAudit } from '../storage/audit-repository.js'
import type { Database } from '../storage/tables.js'
import { inTransaction } from '../storage/transaction.js'

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
