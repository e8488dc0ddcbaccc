/**
 * The SQL the service sends for a key lookup, a progress read and an enroll, captured from its
 * own functions in dist/ (findKeyByHash, readStudentProgress, enrollStudent) through a Kysely
 * log hook, inside a transaction that is rolled back: the reference servers run exactly these
 * statements, so a gap between them and the service is the service's own work, not other SQL.
 *
 * Each statement comes with the names of its parameters in order, found by calling the
 * functions with values that tell them apart (a real student, its organisation, a tier it does
 * not have, marked request and key ids). Calls made: the key lookup; a progress read; an enroll
 * that changes the tier, the same enroll again (unchanged: the tier is read back), and an enroll
 * of a student the organisation cannot see.
 */
import fs from 'node:fs'
import SQLite from 'better-sqlite3'
import { Kysely, SqliteDialect } from 'kysely'
import { importDist } from './paths.mjs'

class Rollback extends Error {}

const TIERS = ['explorer', 'builder', 'innovator']
/** A student id no dataset has. */
const UNKNOWN_STUDENT = 'ffffffff-ffff-4fff-bfff-ffffffffffff'

export async function captureServiceSql(databaseFile) {
  const { readStudentProgress, enrollStudent } = await importDist('storage/student-repository.js')
  const { findKeyByHash } = await importDist('storage/access-repository.js')
  const { DISCLOSURE_ACTIONS, DISCLOSURE_OUTCOMES } = await importDist('storage/disclosure-log.js')
  const database = new SQLite(databaseFile)
  const student = database
    .prepare(
      'select so.student_id as id, so.organisation_id as organisationId, s.tier from student_organisations so join students s on s.id = so.student_id limit 1',
    )
    .get()
  const key = database
    .prepare('select key_hash from api_keys where organisation_id = ? limit 1')
    .get(student.organisationId)
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
  let queries = []
  const db = new Kysely({
    dialect: new SqliteDialect({ database }),
    log: (event) => {
      if (event.level === 'query') queries.push({ sql: event.query.sql, parameters: [...event.query.parameters] })
    },
  })
  const captured = {}
  const capture = async (work) => {
    queries = []
    await work()
    return queries.map(({ sql, parameters }) => ({
      sql,
      params: parameters.map((value) => {
        const name = named.get(value)
        if (name === undefined) throw new Error(`a parameter of "${sql}" is none of the values passed: ${value}`)
        return name
      }),
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
        readStudentProgress(trx, writes, student.id, context),
      )
      const changed = await capture(() => enrollStudent(writes, student.id, tier, context, now))
      const unchanged = await capture(() => enrollStudent(writes, student.id, tier, context, now))
      ;[captured.link, captured.changeTier] = changed
      captured.tier = unchanged[2]
      const unknown = await capture(() => enrollStudent(writes, UNKNOWN_STUDENT, tier, context, now))
      if (unknown.length !== 2)
        throw new Error('an enroll of an unknown student did not send a link check and a disclosure')
      throw new Rollback()
    })
  } catch (error) {
    if (!(error instanceof Rollback)) throw error
  } finally {
    await db.destroy()
  }
  for (const [name, statement] of Object.entries(captured)) {
    if (statement === undefined) throw new Error(`the service sent no "${name}" statement`)
  }
  if (!/^\s*insert into "disclosures"/i.test(captured.disclosure.sql))
    throw new Error(`the third statement of a progress read is not the disclosure insert: ${captured.disclosure.sql}`)
  return captured
}

/** Captures the statements once and writes them where the reference servers read them. */
export async function writeServiceSql(databaseFile, file) {
  const captured = await captureServiceSql(databaseFile)
  fs.writeFileSync(file, `${JSON.stringify(captured, null, 2)}\n`)
  return captured
}
