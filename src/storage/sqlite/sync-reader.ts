/**
 * The synchronous reads of SQLite on a file (`SyncReader`, student-repository.ts): statements
 * prepared once on a raw connection and run at once.
 */
import type SQLite from 'better-sqlite3'
import type { TierId } from '../../domain/tiers.js'
import type { ProgressTuple, SyncReader } from '../student-repository.js'

/**
 * Anything in SQLite's JSON text of the rows that is not printable ASCII, or a backslash: SQLite
 * escapes a quote or a control character in a string with one, so a text without any holds only
 * strings that JSON writes as they are.
 */
const NOT_PLAIN = /[^\x20-\x7e]|\\/

/**
 * The synchronous path's one statement: the student and, as one JSON array of arrays built by
 * SQLite, their progress rows, in the column order of `progressOf` (student-repository.ts). One
 * statement is one read transaction: each read transaction that follows a commit by the writer
 * starts on an emptied page cache, and progress reads come between the disclosure log's commits,
 * so one statement costs less than two (figures: docs/performance.md).
 */
const STUDENT_WITH_PROGRESS = `select s.first_name, s.tier, (
    select json_group_array(json_array(p.lesson_slug, p.status, p.xp, p.time_seconds, p.started_at, p.completed_at))
    from progress as p where p.student_id = s.id
  )
  from students as s
  inner join student_organisations as so on so.student_id = s.id
  where s.id = ? and so.organisation_id = ? and s.sandbox = ?`

type StudentRow = [firstName: string, tier: TierId, progressJson: string]

/**
 * @param connectionNow - the connection to read from at the time of each read (open-sqlite.ts
 *   says which); the statement is prepared once on each connection it returns.
 */
export function sqliteSyncReader(connectionNow: () => SQLite.Database): SyncReader {
  const statements = new WeakMap<SQLite.Database, SQLite.Statement<[string, string, number], StudentRow>>()
  const statementOn = (connection: SQLite.Database) => {
    let statement = statements.get(connection)
    if (statement === undefined) {
      statement = connection.prepare<[string, string, number], StudentRow>(STUDENT_WITH_PROGRESS).raw(true)
      statements.set(connection, statement)
    }
    return statement
  }
  return {
    studentRows(studentId, organisationId, sandbox) {
      const row = statementOn(connectionNow()).get(studentId, organisationId, sandbox)
      if (row === undefined) return undefined
      const json = row[2]
      return {
        firstName: row[0],
        tier: row[1],
        rows: JSON.parse(json) as ProgressTuple[],
        plain: !NOT_PLAIN.test(json),
      }
    },
  }
}
