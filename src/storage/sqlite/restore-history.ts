/**
 * What a restore keeps of the database it replaces. Restoring undoes everything done since the
 * backup, but two records must not lose a row: the disclosure log (the district answers for every
 * disclosure of a child's data) and the operator audit log (who did what). When the replaced
 * database is a later state of the backup, their rows written after the backup are copied into
 * the restored one, the disclosure rows with their ids; and the operator's actions since the
 * backup, undone by the restore, are listed so that those that must stand (erasures, revocations)
 * can be made again.
 */
import type SQLite from 'better-sqlite3'

export interface UndoneAction {
  at: string
  actor: string
  action: string
  target: string
}

export interface CarriedHistory {
  /** Rows copied from the replaced database. */
  carried: { auditRows: number; disclosureRows: number }
  /** The operator actions recorded after the backup, in order; the restore undid their effects. */
  undone: UndoneAction[]
  /** Students erased after the backup, whom the restore brought back. */
  erased: string[]
  /** The last number of the replaced database's change log: cursors partners may hold reach it. */
  changeCounter: number
}

const DISCLOSURE_COLUMNS = 'id, at, request_id, key_id, organisation_id, student_id, action, outcome'

interface AuditRow {
  id: number
  at: string
  action: string
  target: string
  detail: string
}

/** The backup's last audit row before its own (a backup's row is written into its copy last). */
function lastAuditRowBefore(copy: SQLite.Database): { row: AuditRow | undefined; stamp: AuditRow | undefined } {
  const [last, previous] = copy
    .prepare('select id, at, action, target, detail from main.audit_log order by id desc limit 2')
    .all() as AuditRow[]
  return last?.action === 'database.backup' ? { row: previous, stamp: last } : { row: last, stamp: undefined }
}

/**
 * Whether `replaced` holds the backup's migration rows (each database was migrated at its own
 * moments), its last audit row and its last disclosure row, unchanged.
 */
function continuesBackup(copy: SQLite.Database, auditRow: AuditRow | undefined, lastDisclosure: number): boolean {
  const foreign = copy
    .prepare(
      `select 1 from main.kysely_migration m left join replaced.kysely_migration r
       on r.name = m.name and r.timestamp = m.timestamp where r.name is null limit 1`,
    )
    .get()
  if (foreign !== undefined) return false
  if (auditRow !== undefined) {
    const same = copy
      .prepare('select 1 from replaced.audit_log where id = ? and at = ? and action = ? and target = ? and detail = ?')
      .get(auditRow.id, auditRow.at, auditRow.action, auditRow.target, auditRow.detail)
    if (same === undefined) return false
  }
  if (lastDisclosure === 0) return true
  const same = copy
    .prepare(
      `select 1 from replaced.disclosures r join main.disclosures m on m.id = r.id
       where r.id = ? and r.request_id = m.request_id and r.at = m.at and r.student_id = m.student_id`,
    )
    .get(lastDisclosure)
  return same !== undefined
}

/**
 * Copies into `copy` (the restored database, open for writing) the audit and disclosure rows the
 * database file `replaced` wrote after the backup, and says what the restore undid. Returns why
 * not instead when `replaced` cannot be read or is not a later state of the backup.
 */
export function carryHistory(copy: SQLite.Database, replaced: string): CarriedHistory | { notCarried: string } {
  try {
    copy.prepare('attach database ? as replaced').run(replaced)
  } catch (error) {
    return { notCarried: `the replaced database cannot be read (${(error as Error).message})` }
  }
  try {
    const { row, stamp } = lastAuditRowBefore(copy)
    const afterAudit = row?.id ?? 0
    const lastDisclosure = Number(
      (copy.prepare('select coalesce(max(id), 0) as id from main.disclosures').get() as { id: number }).id,
    )
    if (!continuesBackup(copy, row, lastDisclosure))
      return { notCarried: 'the replaced database is not a later state of this backup' }
    // The backup's own row, written into the database too, is in the copy already.
    const own = `and not (action = 'database.backup' and coalesce(detail = @stamp, 0))`
    const params = { after: afterAudit, stamp: stamp?.detail ?? null }
    const undone = copy
      .prepare(`select at, actor, action, target from replaced.audit_log where id > @after ${own} order by id`)
      .all(params) as UndoneAction[]
    const erased = (
      copy
        .prepare(
          `select s.id from main.students s where s.id in (select substr(target, 9) from replaced.audit_log
           where id > ? and action = 'students.erase' and target like 'student:%') order by s.id`,
        )
        .all(afterAudit) as { id: string }[]
    ).map((student) => student.id)
    const counter = copy.prepare(`select version from replaced.meta where name = 'student_changes'`).get() as
      | { version: number }
      | undefined
    const carry = copy.transaction(() => {
      const auditRows = copy
        .prepare(
          `insert into main.audit_log (at, actor, action, target, detail)
           select at, actor, action, target, detail from replaced.audit_log where id > @after ${own} order by id`,
        )
        .run(params).changes
      const disclosureRows = copy
        .prepare(
          `insert into main.disclosures (${DISCLOSURE_COLUMNS})
           select ${DISCLOSURE_COLUMNS} from replaced.disclosures where id > ? order by id`,
        )
        .run(lastDisclosure).changes
      return { auditRows, disclosureRows }
    })
    const carried = carry()
    return { carried, undone, erased, changeCounter: Number(counter?.version ?? 0) }
  } catch (error) {
    return { notCarried: `the replaced database could not be read whole (${(error as Error).message})` }
  } finally {
    copy.exec('detach database replaced')
  }
}
