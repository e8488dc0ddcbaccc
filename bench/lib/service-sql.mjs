/**
 * The SQL the service sends for a key lookup, a progress read and an enroll, captured from its
 * own functions in dist/ (findKeyByHash, readStudentRows, enrollStudent) through a Kysely
 * log hook, inside a transaction that is rolled back: the reference servers run exactly these
 * statements, so a gap between them and the service is the service's own work, not other SQL.
 *
 * Each statement comes with the names of its parameters in order, found by calling the
 * functions with values that tell them apart (a real student, its organisation, a tier it does
 * not have, marked request and key ids). Calls made: the key lookup; a progress read, through
 * Kysely and (SQLite) as the fast path reads, with one statement on a synchronous connection; an enroll
 * that changes the tier (`changeTier`, which checks the link and asks whether webhook endpoints
 * are enabled: on SQLite the conditional update, on PostgreSQL one statement that locks the row,
 * then updates it if its tier differs, and answers what it found), the same enroll again
 * (unchanged: on SQLite the tier is read back with `tier`; PostgreSQL's statement answered it
 * already), and an enroll of a student the organisation cannot see (the same statements, which
 * find nothing). An enroll that changes the tier also appends to the student change log, and the
 * references do too (`changeLog`: the values by name, constants as sent, the row's number from
 * the counter's bump); with webhook endpoints it would also announce the change, which the
 * references leave out
 * (reference-sqlite-server.mjs says what else they leave out).
 */
import fs from 'node:fs'
import SQLite from 'better-sqlite3'
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely'
import pg from 'pg'
import { importDist } from './paths.mjs'
import { recordingReader } from './recording-reader.mjs'

class Rollback extends Error {}

const TIERS = ['explorer', 'builder', 'innovator']
/** The change counter's value while the statements are captured (in the transaction rolled back). */
const CHANGE_COUNTER = 7_000_000_001
/** A student id no dataset has. */
const UNKNOWN_STUDENT = 'ffffffff-ffff-4fff-bfff-ffffffffffff'

/** The statements as the service sends them to SQLite (a dataset file). */
export function captureSqliteSql(databaseFile) {
  const database = new SQLite(databaseFile)
  return captureServiceSql(new SqliteDialect({ database }), database)
}

/** The statements as the service sends them to PostgreSQL, on the dataset's schema. */
export function capturePostgresSql(connectionString, schema) {
  return captureServiceSql(
    new PostgresDialect({ pool: new pg.Pool({ connectionString, max: 1, options: `-c search_path=${schema}` }) }),
  )
}

/**
 * `database`, for SQLite: the connection the service's fast path reads progress from
 * synchronously, with one statement instead of the two it sends through Kysely.
 */
async function captureServiceSql(dialect, database) {
  const sent = []
  const db = new Kysely({
    dialect,
    log: (event) => {
      if (event.level === 'query') sent.push({ sql: event.query.sql, parameters: [...event.query.parameters] })
    },
  })
  try {
    return await captureOn(db, sent, database === undefined ? undefined : await syncReader(database, sent))
  } finally {
    await db.destroy()
  }
}

/** The service's synchronous reader (SQLite), reading through a connection that records what it runs. */
async function syncReader(database, sent) {
  const { sqliteSyncReader } = await importDist('storage/sqlite/sync-reader.js')
  const reader = recordingReader(database, sent)
  return sqliteSyncReader(() => reader)
}

/**
 * Calls the service's functions on `db` (whose log hook fills `sent`) and names the parameters
 * of what they send; with `reader` (SQLite), also the progress read of the fast path.
 */
async function captureOn(db, sent, reader) {
  const { readStudentRows } = await importDist('cases/progress-read.js')
  const { enrollStudent } = await importDist('cases/enroll.js')
  const { findKeyByHash } = await importDist('storage/access-repository.js')
  const { DISCLOSURE_ACTIONS, DISCLOSURE_OUTCOMES } = await importDist('storage/disclosure-log.js')
  const student = await db
    .selectFrom('student_organisations as so')
    .innerJoin('students as s', 's.id', 'so.student_id')
    .select(['so.student_id as id', 'so.organisation_id as organisationId', 's.tier as tier'])
    .limit(1)
    .executeTakeFirstOrThrow()
  const key = await db
    .selectFrom('api_keys')
    .select('key_hash')
    .where('organisation_id', '=', student.organisationId)
    .limit(1)
    .executeTakeFirstOrThrow()
  const at = Date.UTC(2031, 0, 2, 3, 4, 5, 6)
  const now = Date.UTC(2032, 0, 2, 3, 4, 5, 6)
  const tier = TIERS.find((t) => t !== student.tier)
  const named = new Map([
    [student.id, 'studentId'],
    [UNKNOWN_STUDENT, 'studentId'],
    [student.organisationId, 'organisationId'],
    [0, 'sandbox'],
    ['bench-sql-key-id', 'keyId'],
    ['bench-sql-request-id', 'requestId'],
    [new Date(at).toISOString(), 'at'],
    [new Date(now).toISOString(), 'updatedAt'],
    [tier, 'tier'],
    [key.key_hash, 'hash'],
    ...DISCLOSURE_ACTIONS.map((action) => [action, 'action']),
    ...DISCLOSURE_OUTCOMES.map((outcome) => [outcome, 'outcome']),
  ])
  const captured = {}
  const capture = async (work) => {
    sent.length = 0
    await work()
    return sent.map(({ sql, parameters }) => ({
      sql,
      // A value none of the calls passed is a constant of the service's own (a status, a limit)
      // in a statement the references do not run; checked below for those they do.
      params: parameters.map((value) => named.get(value) ?? { constant: value }),
    }))
  }
  try {
    await db.transaction().execute(async (trx) => {
      const context = {
        at,
        requestId: 'bench-sql-request-id',
        keyId: 'bench-sql-key-id',
        organisationId: student.organisationId,
        sandbox: false,
      }
      // Writes straight into this transaction (rolled back below) rather than a group commit.
      const writes = { statement: (work) => work(trx), transaction: (work) => work(trx) }
      ;[captured.keyByHash] = await capture(() => findKeyByHash(trx, key.key_hash))
      ;[captured.student, captured.progress, captured.disclosure] = await capture(() =>
        readStudentRows(trx, writes, student.id, context),
      )
      if (reader !== undefined) {
        // The fast path's read: one statement, the student with their progress rows as JSON.
        const [read, disclosure] = await capture(() => readStudentRows(trx, writes, student.id, context, reader))
        if (disclosure?.sql !== captured.disclosure.sql)
          throw new Error(
            'a progress read on the synchronous connection did not send one statement, then the disclosure',
          )
        captured.studentWithProgress = read
      }
      // A counter value no other parameter has: the change-log row's number is the next one.
      await trx.updateTable('meta').set({ version: CHANGE_COUNTER }).where('name', '=', 'student_changes').execute()
      named.set(CHANGE_COUNTER + 1, 'seq')
      const changed = await capture(() => enrollStudent(writes, student.id, tier, context, now))
      const unchanged = await capture(() => enrollStudent(writes, student.id, tier, context, now))
      captured.changeTier = changed[0]
      if (!/^\s*insert into "disclosures"/i.test(changed[1]?.sql ?? ''))
        throw new Error('the second statement of a changing enroll is not the disclosure insert')
      // The change-log entry: on SQLite the counter's bump, then the row; one statement on PostgreSQL.
      captured.changeLog = changed.slice(2)
      if (captured.changeLog.length === 0) throw new Error('a changing enroll sent no change-log statement')
      // SQLite reads the tier back after an update that changed nothing; on PostgreSQL the one statement answers it.
      const readBack = unchanged.slice(1, -1)
      if (unchanged[0]?.sql !== captured.changeTier.sql || readBack.length > 1)
        throw new Error('an unchanged enroll did not send the tier statement, at most a tier lookup, and a disclosure')
      if (readBack.length === 1) captured.tier = readBack[0]
      const unknown = await capture(() => enrollStudent(writes, UNKNOWN_STUDENT, tier, context, now))
      if (unknown.map((statement) => statement.sql).join(';') !== unchanged.map((statement) => statement.sql).join(';'))
        throw new Error('an enroll of an unknown student did not send the statements of an unchanged one')
      throw new Rollback()
    })
  } catch (error) {
    if (!(error instanceof Rollback)) throw error
  }
  for (const [name, statement] of Object.entries(captured)) {
    if (statement === undefined) throw new Error(`the service sent no "${name}" statement`)
    // The change log's statements carry constants of their own (the counter's name, the bump of 1).
    if (name === 'changeLog') continue
    const constant = statement.params.find((param) => typeof param !== 'string')
    if (constant !== undefined)
      throw new Error(`a parameter of "${statement.sql}" is none of the values passed: ${constant.constant}`)
  }
  if (!/^\s*insert into "disclosures"/i.test(captured.disclosure.sql))
    throw new Error(`the third statement of a progress read is not the disclosure insert: ${captured.disclosure.sql}`)
  return captured
}

/** Writes captured statements (a promise of them) where a reference server reads them. */
export async function writeServiceSql(capturing, file) {
  const captured = await capturing
  fs.writeFileSync(file, `${JSON.stringify(captured, null, 2)}\n`)
  return captured
}
