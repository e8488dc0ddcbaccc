/**
 * The disclosure log's costs as the log grows: `node bench/disclosure-log.mjs [--rows 20000000]`.
 *
 * Builds a SQLite log with the service's migrations, fills it to each size with bulk inserts,
 * seals it with the service's own sealing code, and at each size measures
 * - the request-path write: a row appended in a group-commit batch of 64 (median per row),
 * - sealing: per segment of the configured size,
 * - operator queries through the service's pageDisclosures (median and max of 5 runs), each
 *   followed by a row written just before the query, which it must find.
 * Run after `npm run build`; writes a Markdown table to stdout.
 */
import { randomUUID } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import SQLite from 'better-sqlite3'
import { DIST } from './lib/paths.mjs'

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '2000000' },
    segment: { type: 'string', default: '4096' },
    dir: { type: 'string', default: path.join(os.tmpdir(), 'disclosure-log-bench') },
  },
})
const TARGET = Number(values.rows)
const SEGMENT = Number(values.segment)
const STUDENTS = 100_000
const ORGANISATIONS = 500
const KEYS = 50_000
const T0 = Date.parse('2026-01-01T00:00:00.000Z')

const { openStorage } = await import(path.join(DIST, 'storage/connection.js'))
const { migrate } = await import(path.join(DIST, 'storage/migrate.js'))
const { pageDisclosures, recordDisclosure, sealSegments } = await import(path.join(DIST, 'storage/disclosure-log.js'))

fs.rmSync(values.dir, { recursive: true, force: true })
fs.mkdirSync(values.dir, { recursive: true })
const file = path.join(values.dir, 'log.db')
// As the server opens it: checkpoints on a worker thread, not inside commits.
const storage = openStorage(`sqlite:${file}`, { backgroundCheckpoints: true, busyTimeoutMs: 5000 })
await migrate(storage)

const ids = (prefix, n) => Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(12, '0')}`)
const students = ids('00000000-0000-4000-8000-', STUDENTS)
const organisations = ids('00000000-0000-4000-9000-', ORGANISATIONS)
const keys = ids('00000000-0000-4000-a000-', KEYS)
const OUTCOMES = ['disclosed', 'updated', 'unchanged', 'not_found', 'denied_scope']
let written = 0

/** Bulk rows through a second connection, as fast as SQLite takes them (loading, not measuring). */
function fill(upTo) {
  const raw = new SQLite(file)
  raw.pragma('journal_mode = WAL')
  raw.pragma('synchronous = OFF')
  const insert = raw.prepare(
    'insert into disclosures (at, request_id, key_id, organisation_id, student_id, action, outcome) values (?, ?, ?, ?, ?, ?, ?)',
  )
  const batch = raw.transaction((from, to) => {
    for (let i = from; i < to; i++) {
      const key = i % KEYS
      insert.run(
        new Date(T0 + i * 50).toISOString(),
        randomUUID(),
        keys[key],
        organisations[key % ORGANISATIONS],
        students[(i * 7919) % STUDENTS],
        i % 4 === 0 ? 'enroll' : 'progress.read',
        OUTCOMES[i % 5],
      )
    }
  })
  for (let from = written; from < upTo; from += 100_000) batch(from, Math.min(upTo, from + 100_000))
  raw.close()
  written = upTo
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

/** Per-row cost of appending as requests do: 64 rows in one shared commit, 200 commits. */
async function appendCost() {
  const perRow = []
  for (let b = 0; b < 200; b++) {
    const start = process.hrtime.bigint()
    await Promise.all(
      Array.from({ length: 64 }, (_, i) =>
        storage.writes.statement((db) =>
          recordDisclosure(
            db,
            { at: T0 + written * 50, requestId: randomUUID(), keyId: keys[i], organisationId: organisations[i] },
            students[(written + b * 64 + i) % STUDENTS],
            'progress.read',
            'disclosed',
          ),
        ),
      ),
    )
    perRow.push(Number(process.hrtime.bigint() - start) / 1000 / 64)
  }
  return median(perRow)
}

/** Seals what is complete; also the longest single write, which is how long requests may wait behind it. */
async function seal() {
  const start = performance.now()
  const units = []
  const sealed = await sealSegments(storage.db, {
    segmentRows: SEGMENT,
    horizonMs: 0,
    now: Date.now(),
    write: async (work) => {
      const unitStart = performance.now()
      const result = await storage.writes.transaction(work)
      units.push(performance.now() - unitStart)
      return result
    },
  })
  return {
    sealed,
    ms: performance.now() - start,
    longest: units.length === 0 ? 0 : Math.max(...units),
    unitMedian: units.length === 0 ? 0 : median(units),
  }
}

const QUERIES = [
  ['by student', () => ({ studentId: students[4242] })],
  ['by organisation', () => ({ organisationId: organisations[17] })],
  ['by key', () => ({ keyId: keys[777] })],
  ['by key and outcome', () => ({ keyId: keys[777], outcome: 'denied_scope' })],
  [
    'time range (one hour, a third in)',
    () => ({ since: T0 + (written / 3) * 50, until: T0 + (written / 3) * 50 + 3_600_000 }),
  ],
  [
    'by organisation, time range',
    () => ({ organisationId: organisations[17], since: T0, until: T0 + (written / 2) * 50 }),
  ],
  ['everything', () => ({})],
]

async function queryTimes() {
  const out = []
  for (const [name, filter] of QUERIES) {
    const times = []
    for (let run = 0; run < 5; run++) {
      const start = performance.now()
      const first = await pageDisclosures(storage.db, filter(), 100)
      const second = first.next === null ? null : await pageDisclosures(storage.db, filter(), 100, first.next)
      times.push(performance.now() - start)
      if (second?.rows.some((row) => row.id >= first.next)) throw new Error(`${name}: pages overlap`)
    }
    out.push({ name, median: median(times), max: Math.max(...times) })
  }
  // A row written just now is found by a query for its student.
  const fresh = randomUUID()
  await storage.writes.statement((db) =>
    recordDisclosure(
      db,
      { at: Date.now(), requestId: fresh, keyId: keys[1], organisationId: organisations[1] },
      students[99],
      'enroll',
      'updated',
    ),
  )
  const found = (await pageDisclosures(storage.db, { studentId: students[99] }, 1)).rows[0]?.request_id === fresh
  if (!found) throw new Error('a row written a moment ago was not found')
  return out
}

const sizes = [0, ...[2_000_000, 20_000_000].filter((n) => n <= TARGET)]
if (!sizes.includes(TARGET)) sizes.push(TARGET)
console.log(`# Disclosure log, SQLite, segments of ${SEGMENT} ids (${os.cpus()[0].model}; Node ${process.version})\n`)
console.log(
  '| rows in the log | append, us per row (batches of 64) | seal, ms per segment | sealing writes, median / max ms | query | median ms (2 pages of 100) | max ms |',
)
console.log('| --- | --- | --- | --- | --- | --- | --- |')
// Warm up (JIT, the statement caches) so that the first size is not measured cold.
await appendCost()
await storage.db.deleteFrom('disclosures').execute()
for (const size of sizes) {
  const fillStart = performance.now()
  fill(size)
  const fillMs = performance.now() - fillStart
  const { sealed, ms, longest, unitMedian } = await seal()
  const append = await appendCost()
  await seal()
  const queries = await queryTimes()
  const perSegment = sealed === 0 ? '-' : (ms / sealed).toFixed(1)
  console.error(
    `filled to ${size} in ${(fillMs / 1000).toFixed(1)} s; sealed ${sealed} segments in ${(ms / 1000).toFixed(1)} s`,
  )
  for (const [i, q] of queries.entries()) {
    const lead =
      i === 0
        ? `| ${size.toLocaleString('en')} | ${append.toFixed(1)} | ${perSegment} | ${unitMedian.toFixed(1)} / ${longest.toFixed(1)} `
        : '| | | | '
    console.log(`${lead}| ${q.name} | ${q.median.toFixed(1)} | ${q.max.toFixed(1)} |`)
  }
}
await storage.close()
fs.rmSync(values.dir, { recursive: true, force: true })
