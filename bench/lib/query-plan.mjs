/**
 * EXPLAIN QUERY PLAN of the progress read, for each dataset size. The SQL is not copied here:
 * it is captured from the service's own readStudentRows (dist/cases/progress-read.js)
 * as the service calls it on SQLite, with a connection to read from synchronously (its fast
 * path), inside a transaction that is rolled back (the call also writes a disclosure row), so
 * the plan shown is the plan of the query the service really sends. The statements it sends
 * through Kysely (a build that reads without that connection) are caught by a log hook.
 */
import fs from 'node:fs'
import { Kysely, SqliteDialect } from 'kysely'
import SQLite from 'better-sqlite3'
import { importDist } from './paths.mjs'
import { recordingReader } from './recording-reader.mjs'

class Rollback extends Error {}

export async function progressQueryPlan(databaseFile, pairsFile) {
  const { readStudentRows } = await importDist('cases/progress-read.js')
  const { sqliteSyncReader } = await importDist('storage/sqlite/sync-reader.js')
  const firstPair = fs.readFileSync(pairsFile, 'utf8').split('\n', 1)[0]
  const studentId = firstPair.split(' ')[1]
  const database = new SQLite(databaseFile)
  const organisationId = database
    .prepare('select organisation_id from student_organisations where student_id = ?')
    .pluck()
    .get(studentId)
  const queries = []
  const db = new Kysely({
    dialect: new SqliteDialect({ database }),
    log: (event) => {
      if (event.level === 'query')
        queries.push({ sql: event.query.sql, parameters: [...event.query.parameters], ms: event.queryDurationMillis })
    },
  })
  // The synchronous read prepares its statement on this connection and runs it with `get`.
  const sent = []
  const recording = recordingReader(database, sent)
  const reader = sqliteSyncReader(() => recording)
  try {
    await db.transaction().execute(async (trx) => {
      const context = { at: Date.now(), requestId: 'bench-query-plan', keyId: 'bench', organisationId, sandbox: false }
      // Writes straight into this transaction (rolled back below) rather than a group commit.
      const writes = { statement: (work) => work(trx), transaction: (work) => work(trx) }
      await readStudentRows(trx, writes, studentId, context, reader)
      throw new Rollback()
    })
  } catch (error) {
    if (!(error instanceof Rollback)) throw error
  }
  const selects = [...sent, ...queries].filter((q) => /^\s*select/i.test(q.sql))
  if (selects.length === 0) throw new Error('readStudentRows sent no select')
  // One plan line per step, each prefixed with the number of the select it belongs to.
  const plan = selects.flatMap((select, index) =>
    database
      .prepare(`explain query plan ${select.sql}`)
      .all(...select.parameters)
      .map((row) => (selects.length > 1 ? `${index + 1}: ${row.detail}` : row.detail)),
  )
  await db.destroy()
  return { sql: selects.map((select) => select.sql).join(';\n'), plan }
}
