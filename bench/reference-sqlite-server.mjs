/**
 * The reference for the student endpoints on SQLite: a bare node:http server that does what a
 * progress read and an enroll must do at the least, with the service's own SQL, storage
 * settings and commit scheme, and nothing else. Measured on the same core, dataset copy and wrk
 * scripts as the service, the gap between the two is the service's own work per request.
 *
 * What it does, as the service does:
 * - the statements captured from the service (bench/lib/service-sql.mjs): the key by SHA-256
 *   hash (once per key, then from a Map), the student through student_organisations with
 *   their progress rows, the disclosure insert; for an enroll the conditional update (which checks
 *   the link) and, when it changed nothing, the tier of a student the organisation can see;
 * - reads progress synchronously on the writing connection, mapped into memory, between group
 *   commits, with the fast path's one statement (the student and their progress rows as JSON
 *   built by SQLite; statements prepared once), and looks keys up on a
 *   read-only connection, as the service does on SQLite;
 * - WAL, synchronous=NORMAL, checkpoints on a worker thread (the service's own checkpointer);
 * - group commit: the disclosure rows (and enrolls) of the requests that arrive in one turn of
 *   the event loop are committed in one BEGIN IMMEDIATE ... COMMIT, each enroll in a savepoint,
 *   and every request is answered only after that COMMIT;
 * - the same JSON bodies: progress in catalog order with its summary, the enrollment, a
 *   problem document for an unknown student.
 * What it leaves out: scopes, agreements, organisation status, rate limits, key usage,
 * request ids in headers, CORS, logging, input validation beyond the tier, sealing the log,
 * and announcing a change to webhooks (with no endpoint enabled, as in the bench, the service
 * does not either). A changed tier's change-log entry it writes, as the service does.
 *
 * Environment: PORT, REFERENCE_DATABASE (the SQLite file), REFERENCE_SQL (the JSON that
 * service-sql.mjs wrote). GET /readyz answers 200; GET /api/v1/tiers checks the key and answers
 * {} (only so that the bench's key-cache fill works here as on the service).
 */
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import SQLite from 'better-sqlite3'
import { SERVICE_DIST } from './lib/paths.mjs'
import {
  bearer,
  catalogIndex,
  keyEntry,
  keyHash,
  notFound,
  problem,
  progressBody,
  readBody,
  route,
  send,
  statementValues,
  tierOf,
  unavailable,
} from './lib/reference-responses.mjs'

const file = process.env.REFERENCE_DATABASE
const statements = JSON.parse(fs.readFileSync(process.env.REFERENCE_SQL, 'utf8'))
const { startCheckpointer } = await import(path.join(SERVICE_DIST, 'storage', 'sqlite', 'checkpointer.js'))

const writer = new SQLite(file)
writer.pragma('journal_mode = WAL')
writer.pragma('synchronous = NORMAL')
writer.pragma('foreign_keys = ON')
writer.pragma('busy_timeout = 5000')
writer.pragma('wal_autocheckpoint = 0')
// The service's default SQLITE_MMAP_MIB, on the connection that reads progress.
writer.pragma(`mmap_size = ${1024 * 1024 * 1024}`)
const checkpointer = startCheckpointer({ file })
// Key lookups only, unmapped, as the service does them.
const reader = new SQLite(file, { readonly: true, fileMustExist: true })
reader.pragma('busy_timeout = 5000')

/** A captured statement prepared on `db`, with a function that orders named values as its parameters. */
function prepared(db, name, { raw = false } = {}) {
  const { sql, params } = statements[name]
  const statement = db.prepare(sql)
  if (raw) statement.raw(true)
  return { statement, args: argsOf(params) }
}

/** Orders named values as a statement's parameters; a constant of the service's stays as sent. */
function argsOf(params) {
  return (values) => params.map((param) => (typeof param === 'string' ? values[param] : param.constant))
}

/** The change-log entry of a changed tier, as the service writes it: counter bump, then the row (numbered by it). */
const changeLog = statements.changeLog.map(({ sql, params }) => ({
  statement: writer.prepare(sql),
  args: argsOf(params),
}))
function logChange(values) {
  for (const { statement, args } of changeLog) {
    if (statement.reader) values.seq = Number(statement.get(...args(values)).version)
    else statement.run(...args(values))
  }
}
const keyByHash = prepared(reader, 'keyByHash')
// On the writer, as the service reads progress while the writer has no transaction open (its
// own commits leave its page cache warm); here a group commit never spans a request.
// The student and their progress rows in one statement (the rows as JSON built by SQLite), as
// the service's fast path reads them.
const studentWithProgress = prepared(writer, 'studentWithProgress', { raw: true })
const insertDisclosure = prepared(writer, 'disclosure')
const changeTier = prepared(writer, 'changeTier')
const tierQuery = prepared(writer, 'tier')
const begin = writer.prepare('begin immediate')
const commit = writer.prepare('commit')
const rollback = writer.prepare('rollback')
const savepoint = writer.prepare('savepoint unit')
const release = writer.prepare('release unit')
const rollbackTo = writer.prepare('rollback to unit')

// The catalog, for the order of progress entries and the summary (the service keeps it in memory too).
const index = catalogIndex(reader.prepare('select slug, tier, position from lessons').all())

/** Keys by their plaintext: the record, or null for a key that is not valid. */
const keys = new Map()

function principal(request) {
  const token = bearer(request)
  if (token === undefined) return undefined
  let entry = keys.get(token)
  if (entry === undefined) {
    entry = keyEntry(keyByHash.statement.get(...keyByHash.args({ hash: keyHash(token) })))
    keys.set(token, entry)
  }
  return entry ?? undefined
}

// Group commit, as the service's write queue does it on SQLite (src/storage/sqlite/group-commit.ts).
const MAX_BATCH = 256
let pending = []
let scheduled = false

/** Runs `work` in the next shared transaction; `done(error, value)` is called after its COMMIT. */
function write(work, inSavepoint, done) {
  pending.push({ work, inSavepoint, done })
  if (!scheduled) {
    scheduled = true
    setImmediate(flush)
  }
}

function flush() {
  const batch = pending.length > MAX_BATCH ? pending.splice(0, MAX_BATCH) : pending
  if (batch === pending) pending = []
  if (pending.length > 0) setImmediate(flush)
  else scheduled = false
  const outcomes = new Array(batch.length)
  try {
    begin.run()
    for (let i = 0; i < batch.length; i++) {
      const unit = batch[i]
      if (unit.inSavepoint) savepoint.run()
      try {
        outcomes[i] = { value: unit.work() }
        if (unit.inSavepoint) release.run()
      } catch (error) {
        if (!writer.inTransaction || !unit.inSavepoint) throw error
        rollbackTo.run()
        release.run()
        outcomes[i] = { error }
      }
    }
    commit.run()
  } catch (error) {
    if (writer.inTransaction) rollback.run()
    for (const unit of batch) unit.done(error)
    return
  }
  for (let i = 0; i < batch.length; i++) batch[i].done(outcomes[i].error, outcomes[i].value)
}

function disclose(values, action, outcome) {
  values.action = action
  values.outcome = outcome
  insertDisclosure.statement.run(...insertDisclosure.args(values))
}

/** The student the organisation can see (undefined for any other id) and their progress rows as arrays. */
function lookUp(values) {
  const row = studentWithProgress.statement.get(...studentWithProgress.args(values))
  if (row === undefined) return { student: undefined, rows: [] }
  return { student: { firstName: row[0], tier: row[1] }, rows: JSON.parse(row[2]) }
}

function progress(reply, key, id) {
  const values = statementValues(key, id)
  const { student, rows } = lookUp(values)
  write(
    () => disclose(values, 'progress.read', student === undefined ? 'not_found' : 'disclosed'),
    false,
    (error) => {
      if (error !== undefined) unavailable(reply)
      else if (student === undefined) notFound(reply, id)
      else send(reply, 200, progressBody(index, id, student, rows))
    },
  )
}

function enroll(reply, key, id, body) {
  const tier = tierOf(body)
  if (tier === undefined) return problem(reply, 400, 'validation_failed', 'tier must be explorer, builder or innovator')
  const now = new Date().toISOString()
  const values = { ...statementValues(key, id, now), tier, updatedAt: now }
  write(
    () => {
      const updated = changeTier.statement.get(...changeTier.args(values))
      const current = updated ?? tierQuery.statement.get(...tierQuery.args(values))
      if (current === undefined) {
        disclose(values, 'enroll', 'not_found')
        return undefined
      }
      disclose(values, 'enroll', updated === undefined ? 'unchanged' : 'updated')
      if (updated !== undefined) logChange(values)
      return { profileId: id, tier: current.tier, updatedAt: current.tier_updated_at }
    },
    true,
    (error, result) => {
      if (error !== undefined) unavailable(reply)
      else if (result === undefined) notFound(reply, id)
      else send(reply, 200, JSON.stringify(result))
    },
  )
}

const server = http.createServer((request, reply) => {
  const target = route(request)
  if (target.kind === 'ready') return send(reply, 200, '{"status":"ready"}')
  const key = principal(request)
  if (key === undefined) return problem(reply, 401, 'invalid_api_key', 'The API key is not valid.')
  if (target.kind === 'tiers') return send(reply, 200, '{}')
  if (target.kind === 'progress') return progress(reply, key, target.id)
  if (target.kind === 'enroll') return readBody(request, (body) => enroll(reply, key, target.id, body))
  problem(reply, 404, 'not_found', 'No such route.')
})
server.keepAliveTimeout = 65_000
server.listen(Number(process.env.PORT), '127.0.0.1')

async function stop() {
  server.close()
  server.closeAllConnections()
  await checkpointer.stop()
  reader.close()
  writer.close()
  process.exit(0)
}
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
