/**
 * Copies of the main dataset whose disclosure log already holds a given number of rows, so that
 * progress reads and enrolls are measured against a log that has been running for a while, as
 * in production, not against the empty log that resetDataset leaves.
 *
 * A copy is made once and kept under bench/.data/<dataset>-log-<size>/ (with its manifest.json;
 * reused while the manifest matches, like the dataset itself):
 * - the main dataset's file is copied as it is;
 * - rows are bulk inserted (better-sqlite3, 100-row statements) as requests would have written
 *   them: keys, organisations and students of the dataset (the key of the student's own
 *   organisation, or of another one for a "not_found"), times spread evenly over the past
 *   SPAN_DAYS in id order, progress reads and enrolls mixed with their usual outcomes;
 * - every complete segment is sealed with the service's own sealSegments (from dist/), chunk by
 *   chunk while filling, so the server starts with lookups up to date and an unsealed tail of
 *   less than one segment, as a server that has been sealing every second would have left it.
 *
 * A run appends to the log (every request does) and the server seals what it appended. Before a
 * copy is used again those rows are taken out again (restoreLog): every run starts with exactly
 * the rows that were prepared, none of them deleted.
 */
import { randomUUID } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import SQLite from 'better-sqlite3'
import { Kysely, SqliteDialect } from 'kysely'
import { DATA_DIR, importDist } from './paths.mjs'
import { bulk, randomInt, warmPageCache } from './sqlite-dataset.mjs'

/** Bump whenever what is generated changes, so stale copies are rebuilt. */
export const LOG_GENERATOR_VERSION = 1

const DAY = 86_400_000
/** The prepared rows span this many days, ending a minute before the copy was made. */
const SPAN_DAYS = 180
/** Rows inserted between two sealing passes: recent pages are still in SQLite's cache when sealed. */
const CHUNK_SEGMENTS = 64

/**
 * What the logged requests were, with weights: mostly reads that disclosed data, a quarter
 * enrolls, and the refusals and unknown students a real log carries.
 */
const KINDS = [
  { action: 'progress.read', outcome: 'disclosed', weight: 70 },
  { action: 'progress.read', outcome: 'not_found', weight: 2, foreign: true },
  { action: 'progress.read', outcome: 'denied_rate_limit', weight: 2 },
  { action: 'progress.read', outcome: 'denied_scope', weight: 0.5 },
  { action: 'progress.read', outcome: 'denied_agreement', weight: 0.5 },
  { action: 'enroll', outcome: 'updated', weight: 13 },
  { action: 'enroll', outcome: 'unchanged', weight: 10 },
  { action: 'enroll', outcome: 'not_found', weight: 1, foreign: true },
  { action: 'enroll', outcome: 'denied_rate_limit', weight: 1 },
]
const COLUMNS = ['at', 'request_id', 'key_id', 'organisation_id', 'student_id', 'action', 'outcome']

/**
 * The log sizes to measure: BENCH_DISCLOSURE_ROWS (comma-separated; `2000000`, `2M` and `200k`
 * all work), by default 0 and 2M, and 20M too with BENCH_SCALING=full. Ascending, no repeats.
 */
export function disclosureSizes(env = process.env) {
  const raw = env.BENCH_DISCLOSURE_ROWS?.trim()
  const full = (env.BENCH_SCALING ?? '').toLowerCase() === 'full'
  const text = raw === undefined || raw === '' ? (full ? '0,2000000,20000000' : '0,2000000') : raw
  const sizes = text
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => {
      const match = /^(\d+(?:\.\d+)?)([kKmM]?)$/.exec(part.replace(/_/g, ''))
      const value = match === null ? Number.NaN : Number(match[1]) * { '': 1, k: 1e3, m: 1e6 }[match[2].toLowerCase()]
      if (!Number.isInteger(value) || value < 0)
        throw new Error(`BENCH_DISCLOSURE_ROWS: "${part}" is not a row count (e.g. 0,200k,2M,20000000)`)
      return value
    })
  if (sizes.length === 0) throw new Error('BENCH_DISCLOSURE_ROWS names no size')
  return [...new Set(sizes)].sort((a, b) => a - b)
}

/** 0, 200k, 2M, 20M, 1,234,567. */
export function sizeLabel(rows) {
  if (rows >= 1e6 && rows % 1e5 === 0) return `${rows / 1e6}M`
  if (rows >= 1e3 && rows % 100 === 0) return `${rows / 1e3}k`
  return rows.toLocaleString('en')
}

/** The segment size the server seals with when DISCLOSURE_SEGMENT_ROWS is unset (the bench never sets it). */
export async function serviceSegmentRows() {
  const { loadConfig } = await importDist('config.js')
  return loadConfig({}).disclosureSegmentRows
}

function readManifest(dir) {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'))
  } catch {
    return undefined
  }
}

/**
 * The copy of `base` (an ensureSqliteDataset result, already reset) with `rows` rows in its
 * disclosure log, made unless a matching one exists; a reused copy is first brought back to the
 * rows it was prepared with. Returns the base's files (keys, pairs) with this copy's database.
 */
export async function ensureLogDataset(base, rows, { log = console.log } = {}) {
  const segmentRows = await serviceSegmentRows()
  const dir = path.join(DATA_DIR, `${base.manifest.name}-log-${sizeLabel(rows).toLowerCase().replace(/,/g, '')}`)
  const database = path.join(dir, 'dataset.db')
  const wanted = {
    logGeneratorVersion: LOG_GENERATOR_VERSION,
    baseDatasetId: base.manifest.datasetId,
    migrations: base.manifest.migrations,
    disclosureRows: rows,
    segmentRows,
  }
  const existing = readManifest(dir)
  const files = { ...base, dir, database }
  if (
    existing !== undefined &&
    Object.entries(wanted).every(([field, value]) => existing[field] === value) &&
    fs.existsSync(database)
  ) {
    const removed = restoreLog(database, existing.prepared)
    warmPageCache(database)
    return { ...files, log: existing, reused: true, removed }
  }

  fs.rmSync(dir, { recursive: true, force: true })
  fs.mkdirSync(dir, { recursive: true })
  log(`  preparing ${dir}: ${rows.toLocaleString('en')} disclosure rows, sealed in segments of ${segmentRows}`)
  const started = performance.now()
  // The base has just been reset; a TRUNCATE checkpoint leaves its whole content in the file.
  const source = new SQLite(base.database)
  source.pragma('wal_checkpoint(TRUNCATE)')
  source.close()
  fs.copyFileSync(base.database, database)
  const copySeconds = (performance.now() - started) / 1000
  const { insertSeconds, sealSeconds } = await fillLog(database, rows, segmentRows, log)
  const prepared = preparedState(database)
  const manifest = {
    ...wanted,
    baseName: base.manifest.name,
    createdAt: new Date().toISOString(),
    generationSeconds: (performance.now() - started) / 1000,
    timings: { copy: round(copySeconds), insert: round(insertSeconds), seal: round(sealSeconds) },
    bytes: fs.statSync(database).size,
    prepared,
  }
  fs.writeFileSync(path.join(dir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`)
  warmPageCache(database)
  return { ...files, log: manifest, reused: false, removed: 0 }
}

const round = (seconds) => Math.round(seconds * 1000) / 1000

async function fillLog(file, rows, segmentRows, log) {
  const { sealSegments } = await importDist('storage/disclosure-log.js')
  const db = new SQLite(file)
  // Loading, as for the dataset: a crash means preparing again.
  db.pragma('journal_mode = MEMORY')
  db.pragma('synchronous = OFF')
  db.pragma('cache_size = -262144')
  db.pragma('temp_store = MEMORY')
  db.pragma('locking_mode = EXCLUSIVE')
  const kysely = new Kysely({ dialect: new SqliteDialect({ database: db }) })
  let insertSeconds = 0
  let sealSeconds = 0
  try {
    const keysByOrganisation = new Map()
    for (const [id, organisation] of db.prepare('select id, organisation_id from api_keys').raw().all()) {
      if (!keysByOrganisation.has(organisation)) keysByOrganisation.set(organisation, [])
      keysByOrganisation.get(organisation).push(id)
    }
    const organisations = [...keysByOrganisation.keys()]
    const students = db.prepare('select student_id, organisation_id from student_organisations').raw().all()
    const weights = KINDS.reduce((sum, kind) => sum + kind.weight, 0)
    const pick = () => {
      let r = Math.random() * weights
      for (const kind of KINDS) if ((r -= kind.weight) < 0) return kind
      return KINDS[0]
    }
    const now = Date.now()
    const first = now - SPAN_DAYS * DAY - 60_000
    const step = rows === 0 ? 0 : (SPAN_DAYS * DAY) / rows
    const at = isoMillisFormatter(first, SPAN_DAYS)
    const chunk = segmentRows * CHUNK_SEGMENTS
    let written = 0
    let reported = 0
    while (written < rows) {
      const upTo = Math.min(rows, written + chunk)
      let mark = performance.now()
      bulk(db, 'disclosures', COLUMNS, (insert) => {
        for (let i = written; i < upTo; i++) {
          const [studentId, own] = students[randomInt(students.length)]
          const kind = pick()
          const organisation = kind.foreign ? organisations[randomInt(organisations.length)] : own
          const keys = keysByOrganisation.get(organisation)
          insert(
            at(Math.floor(i * step + Math.random() * step)),
            randomUUID(),
            keys[randomInt(keys.length)],
            organisation,
            studentId,
            kind.action,
            kind.outcome,
          )
        }
      })
      insertSeconds += (performance.now() - mark) / 1000
      written = upTo
      mark = performance.now()
      await sealSegments(kysely, {
        segmentRows,
        horizonMs: 0,
        now,
        write: (work) => kysely.transaction().execute(work),
      })
      sealSeconds += (performance.now() - mark) / 1000
      if (written - reported >= rows / 10 || written === rows) {
        reported = written
        log(
          `    ${written.toLocaleString('en')} rows (inserting ${insertSeconds.toFixed(1)} s, sealing ${sealSeconds.toFixed(1)} s)`,
        )
      }
    }
    db.pragma('locking_mode = NORMAL')
    db.pragma('journal_mode = WAL')
  } finally {
    await kysely.destroy().catch(() => {})
    if (db.open) db.close()
  }
  return { insertSeconds, sealSeconds }
}

/** Where the prepared log ends: what restoreLog brings a used copy back to. */
function preparedState(file) {
  const db = new SQLite(file, { readonly: true })
  try {
    const lastId = db.prepare('select coalesce(max(id), 0) from disclosures').pluck().get()
    const sealedUpTo = db.prepare('select coalesce(max(last_id), 0) from disclosure_segments').pluck().get()
    const segments = db.prepare('select count(*) from disclosure_segments').pluck().get()
    const sequence = db.prepare("select seq from sqlite_sequence where name = 'disclosures'").pluck().get() ?? null
    return { lastId, sealedUpTo, segments, unsealedRows: lastId - sealedUpTo, sequence }
  } finally {
    db.close()
  }
}

/**
 * Takes out what earlier runs appended (rows past the prepared ones, and the segments and
 * lookups the server sealed over them), resets the id sequence so the next ids are the ones the
 * prepared log would hand out, and clears key usage times as resetDataset does. Returns how
 * many rows were taken out.
 */
export function restoreLog(file, prepared) {
  const db = new SQLite(file)
  try {
    db.pragma('busy_timeout = 5000')
    const removed = db.transaction(() => {
      const count = db.prepare('delete from disclosures where id > ?').run(prepared.lastId).changes
      // Segments are numbered by their first id; a segment sealed by a run starts after the prepared ones.
      db.prepare('delete from disclosure_lookup where segment > ?').run(prepared.sealedUpTo)
      db.prepare('delete from disclosure_segments where first_id > ?').run(prepared.sealedUpTo)
      if (prepared.sequence === null) db.prepare("delete from sqlite_sequence where name = 'disclosures'").run()
      else db.prepare("update sqlite_sequence set seq = ? where name = 'disclosures'").run(prepared.sequence)
      db.prepare('update api_keys set last_used_at = null where last_used_at is not null').run()
      return count
    })()
    db.pragma('wal_checkpoint(TRUNCATE)')
    return removed
  } finally {
    db.close()
  }
}

/**
 * ISO 8601 with milliseconds (what the service stores) for `days` days from `start`, from
 * precomputed parts: toISOString() on millions of rows would take most of the fill's time.
 * Takes ms from start.
 */
function isoMillisFormatter(start, days) {
  const midnight = Math.floor(start / DAY) * DAY
  const dates = Array.from({ length: days + 2 }, (_, d) => new Date(midnight + d * DAY).toISOString().slice(0, 11))
  const seconds = Array.from({ length: 86_400 }, (_, t) => new Date(t * 1000).toISOString().slice(11, 19))
  const millis = Array.from({ length: 1000 }, (_, m) => `.${String(m).padStart(3, '0')}Z`)
  const offset = start - midnight
  return (ms) => {
    const total = offset + ms
    const second = Math.floor(total / 1000)
    return dates[Math.floor(second / 86_400)] + seconds[second % 86_400] + millis[total % 1000]
  }
}
