/**
 * The operator audit log: who did what to what, and when. Rows are only ever added.
 */
import type { Kysely } from 'kysely'
import { isoAt } from '../clock.js'
import type { AuditRow, Database } from './tables.js'

export interface AuditEntry {
  actor: string
  action: string
  target: string
  detail?: Record<string, unknown>
}

export async function recordAudit(db: Kysely<Database>, entry: AuditEntry, now: number): Promise<void> {
  await db
    .insertInto('audit_log')
    .values({
      at: isoAt(now),
      actor: entry.actor,
      action: entry.action,
      target: entry.target,
      detail: JSON.stringify(entry.detail ?? {}),
    })
    .execute()
}

/** Newest first. */
export async function listAudit(db: Kysely<Database>, limit = 200): Promise<AuditRow[]> {
  return db.selectFrom('audit_log').selectAll().orderBy('at', 'desc').orderBy('id', 'desc').limit(limit).execute()
}
