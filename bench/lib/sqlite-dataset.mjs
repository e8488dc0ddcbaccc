/**
 * The benchmark dataset: a SQLite file built by the service's own migrations and catalog import,
 * then filled with bulk inserts (better-sqlite3 prepared statements, one transaction per table,
 * journal off while loading) so that millions of rows take seconds, not minutes.
 *
 * Shape (per dataset size): 500 organisations, each with an active agreement; students spread
 * evenly over them (first names only); 20 progress rows per student on average, real lesson
 * slugs; 50,000 live keys with "students:read students:write", stored as SHA-256 hashes exactly
 * as createApiKey stores them. Organisation of student s and of key k: s % 500 and k % 500.
 *
 * Files next to the database, for the wrk scripts: keys.txt (one plaintext key a line),
 * pairs.txt ("key student" lines, the student visible to the key, in random order),
 * bad-keys.txt (well-formed keys that were never stored), manifest.json (what was generated;
 * a dataset is reused while its manifest matches GENERATOR_VERSION, the sizes and the list of
 * migrations in dist/).
 */
import { randomUUID } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import SQLite from 'better-sqlite3'
import { CATALOG_DIR, DATA_DIR, importDist, SERVICE_DIST } from './paths.mjs'

/** Bump whenever what is generated changes, so stale datasets are rebuilt. */
export const GENERATOR_VERSION = 1

export const ORGANISATIONS = 500
export const KEYS = 50_000
export const BAD_KEYS = 10_000
export const PROGRESS_PER_STUDENT = 20
/** Most "key student" lines written; enough for any run, small enough for wrk to hold. */
const MAX_PAIRS = 200_000

/** Dataset sizes by name; rows-2m is the main one, the others serve the scaling run. */
export const DATASETS = Object.freeze({
  'rows-20k': { students: 1_000 },
  'rows-200k': { students: 10_000 },
  'rows-2m': { students: 100_000 },
  'rows-20m': { students: 1_000_000 },
})

const FIRST_NAMES = [
  'Maya',
  'Liam',
  'Ava',
  'Noah',
  'Zara',
  'Omar',
  'Ines',
  'Leo',
  'Sofia',
  'Arjun',
  'Chloe',
  'Mateo',
  'Amara',
  'Finn',
  'Hana',
  'Kofi',
  'Lena',
  'Ravi',
  'Nia',
  'Jonas',
  'Yuki',
  'Elif',
  'Tariq',
  'Freya',
  'Diego',
  'Aisha',
  'Milo',
  'Priya',
  'Oscar',
  'Layla',
  'Emil',
  'Sana',
  'Hugo',
  'Maren',
  'Kai',
  'Noor',
  'Ezra',
  'Ingrid',
  'Tomas',
  'Zoe',
]
const TIERS = ['explorer', 'builder', 'innovator']
const DAY = 86_400_000

export function datasetDir(name) {
  return path.join(DATA_DIR, name)
}

/** The service's migrations as built; a dataset made under other migrations is rebuilt. */
function migrationNames() {
  return fs
    .readdirSync(path.join(SERVICE_DIST, 'storage', 'migrations'))
    .filter((file) => file.endsWith('.js'))
    .sort()
    .join(',')
}

function wantedManifest(name) {
  const spec = DATASETS[name]
  if (spec === undefined) throw new Error(`unknown dataset ${name}`)
  return {
    generatorVersion: GENERATOR_VERSION,
    migrations: migrationNames(),
    name,
    organisations: ORGANISATIONS,
    students: spec.students,
    progressRows: spec.students * PROGRESS_PER_STUDENT,
    keys: KEYS,
    badKeys: BAD_KEYS,
  }
}

function readManifest(dir) {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'))
  } catch {
    return undefined
  }
}

function matches(manifest, wanted) {
  return manifest !== undefined && Object.entries(wanted).every(([field, value]) => manifest[field] === value)
}

/** The dataset `name`, generated unless a matching one exists. */
export async function ensureSqliteDataset(name, log = console.log) {
  const dir = datasetDir(name)
  const wanted = wantedManifest(name)
  const existing = readManifest(dir)
  const files = datasetFiles(dir)
  if (matches(existing, wanted) && Object.values(files).every((file) => fs.existsSync(file))) {
    return { ...files, manifest: existing, reused: true }
  }
  fs.rmSync(dir, { recursive: true, force: true })
  fs.mkdirSync(dir, { recursive: true })
  log(
    `generating dataset ${name}: ${wanted.students.toLocaleString('en')} students, ${wanted.progressRows.toLocaleString('en')} progress rows, ${KEYS.toLocaleString('en')} keys`,
  )
  const started = performance.now()
  const timings = await generate(files, wanted)
  const manifest = {
    ...wanted,
    datasetId: randomUUID(),
    createdAt: new Date().toISOString(),
    generationSeconds: (performance.now() - started) / 1000,
    timings,
    bytes: fs.statSync(files.database).size,
  }
  fs.writeFileSync(path.join(dir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`)
  return { ...files, manifest, reused: false }
}

function datasetFiles(dir) {
  return {
    dir,
    database: path.join(dir, 'dataset.db'),
    keys: path.join(dir, 'keys.txt'),
    pairs: path.join(dir, 'pairs.txt'),
    badKeys: path.join(dir, 'bad-keys.txt'),
  }
}

async function generate(files, wanted) {
  const timings = {}
  let mark = performance.now()
  const lap = (name) => {
    const now = performance.now()
    timings[name] = Math.round(now - mark) / 1000
    mark = now
  }

  // Schema and catalog through the service's own code, so the bench follows its migrations.
  const { openStorage } = await importDist('storage/connection.js')
  const { migrate } = await importDist('storage/migrate.js')
  const { readCatalogDir } = await importDist('catalog/catalog-files.js')
  const { replaceCatalog } = await importDist('storage/catalog-repository.js')
  const { generateApiKey } = await importDist('domain/api-key.js')
  const storage = openStorage(`sqlite:${files.database}`)
  try {
    await migrate(storage)
    const read = readCatalogDir(CATALOG_DIR)
    if (!read.ok) throw new Error(`the sample catalog is invalid: ${JSON.stringify(read.problems.slice(0, 3))}`)
    await replaceCatalog(storage.db, read.catalog)
  } finally {
    await storage.close()
  }
  lap('schemaAndCatalog')

  const db = new SQLite(files.database)
  // Nothing to protect while loading: a crash means generating again. (OFF would be faster,
  // but better-sqlite3 opens databases in defensive mode, which refuses it.)
  db.pragma('journal_mode = MEMORY')
  db.pragma('synchronous = OFF')
  db.pragma('cache_size = -262144')
  db.pragma('temp_store = MEMORY')
  db.pragma('locking_mode = EXCLUSIVE')

  const slugs = db.prepare('select slug from lessons order by position').pluck().all()
  const now = Date.now()
  const iso = (ms) => new Date(ms).toISOString()
  const created = iso(now - 120 * DAY)

  const organisationIds = Array.from({ length: ORGANISATIONS }, () => randomUUID())
  bulk(db, 'organisations', ['id', 'name', 'status', 'created_at'], (insert) => {
    organisationIds.forEach((id, i) =>
      insert(id, `Bench organisation ${String(i + 1).padStart(3, '0')}`, 'active', created),
    )
  })
  bulk(
    db,
    'agreements',
    ['id', 'organisation_id', 'signed_at', 'expires_at', 'ended_at', 'document_ref', 'created_at'],
    (insert) => {
      for (const id of organisationIds)
        insert(randomUUID(), id, iso(now - 90 * DAY), null, null, 'BENCH-DSA-0001 (benchmark data)', created)
    },
  )
  lap('organisationsAndAgreements')

  const keys = Array.from({ length: KEYS }, () => generateApiKey('live'))
  lap('keyGeneration')
  bulk(
    db,
    'api_keys',
    [
      'id',
      'organisation_id',
      'name',
      'display_prefix',
      'key_hash',
      'scopes',
      'mode',
      'created_at',
      'expires_at',
      'revoked_at',
      'last_used_at',
    ],
    (insert) => {
      keys.forEach((key, k) =>
        insert(
          randomUUID(),
          organisationIds[k % ORGANISATIONS],
          `bench key ${k}`,
          key.displayPrefix,
          key.hash,
          'students:read students:write',
          'live',
          created,
          null,
          null,
          null,
        ),
      )
    },
  )
  lap('apiKeys')

  // Sorted ids make every index insert an append.
  const studentIds = Array.from({ length: wanted.students }, () => randomUUID()).sort()
  bulk(db, 'students', ['id', 'first_name', 'tier', 'tier_updated_at', 'created_at'], (insert) => {
    studentIds.forEach((id) =>
      insert(id, FIRST_NAMES[randomInt(FIRST_NAMES.length)], TIERS[randomInt(3)], created, created),
    )
  })
  bulk(db, 'student_organisations', ['student_id', 'organisation_id', 'created_at'], (insert) => {
    studentIds.forEach((id, s) => insert(id, organisationIds[s % ORGANISATIONS], created))
  })
  lap('students')

  // About 20 rows a student (16 to 24; pairs of students balance out to exactly 20 on average).
  let progressRows = 0
  const isoSecond = isoFormatter(now - 60 * DAY, 120)
  bulk(
    db,
    'progress',
    ['student_id', 'lesson_slug', 'status', 'xp', 'time_seconds', 'started_at', 'completed_at'],
    (insert) => {
      let delta = 0
      studentIds.forEach((id, s) => {
        if (s % 2 === 0) delta = randomInt(5)
        const count = Math.min(slugs.length, PROGRESS_PER_STUDENT + (s % 2 === 0 ? delta : -delta))
        const first = randomInt(slugs.length)
        const inProgress = 1 + randomInt(3)
        let at = randomInt(30 * DAY)
        for (let i = 0; i < count; i++) {
          const completed = i < count - inProgress
          const seconds = 60 + randomInt(1800)
          const startedAt = isoSecond(at)
          at += seconds * 1000 + randomInt(DAY)
          insert(
            id,
            slugs[(first + i) % slugs.length],
            completed ? 'completed' : 'in_progress',
            completed ? 50 + randomInt(150) : randomInt(50),
            seconds,
            startedAt,
            completed ? isoSecond(at) : null,
          )
          progressRows++
        }
      })
    },
  )
  lap('progress')

  // Rows were written behind the service's back: announce them as the CLI would.
  db.prepare("update meta set version = version + 1 where name = 'access'").run()
  db.exec('analyze')
  lap('analyze')
  db.pragma('locking_mode = NORMAL')
  db.pragma('journal_mode = WAL')
  db.close()

  fs.writeFileSync(files.keys, `${keys.map((k) => k.key).join('\n')}\n`)
  fs.writeFileSync(files.pairs, `${pairLines(keys, studentIds).join('\n')}\n`)
  fs.writeFileSync(files.badKeys, `${Array.from({ length: BAD_KEYS }, () => generateApiKey('live').key).join('\n')}\n`)
  lap('files')
  if (progressRows !== wanted.progressRows)
    throw new Error(`generated ${progressRows} progress rows, expected ${wanted.progressRows}`)
  return timings
}

/**
 * "key student" lines, shuffled so that reads land all over the index. Line j pairs key
 * j % KEYS with a student of the same organisation (j % 500): each key appears equally often.
 */
function pairLines(keys, studentIds) {
  const students = studentIds.length
  const count = Math.max(keys.length, Math.min(students, MAX_PAIRS))
  const lines = new Array(count)
  for (let j = 0; j < count; j++) {
    const s = count === students ? j : (j % ORGANISATIONS) + ORGANISATIONS * randomInt(students / ORGANISATIONS)
    lines[j] = `${keys[j % keys.length].key} ${studentIds[s]}`
  }
  for (let i = count - 1; i > 0; i--) {
    const j = randomInt(i + 1)
    ;[lines[i], lines[j]] = [lines[j], lines[i]]
  }
  return lines
}

/**
 * ISO 8601 on whole seconds for `days` days from `start`, built from precomputed parts: calling
 * toISOString() four million times is most of the generation time otherwise. Takes ms from start.
 */
function isoFormatter(start, days) {
  const midnight = Math.floor(start / DAY) * DAY
  const dates = Array.from({ length: days + 2 }, (_, d) => new Date(midnight + d * DAY).toISOString().slice(0, 11))
  const times = Array.from({ length: 86_400 }, (_, t) => new Date(t * 1000).toISOString().slice(11))
  const offset = Math.floor((start - midnight) / 1000)
  return (ms) => {
    const second = offset + Math.floor(ms / 1000)
    return dates[Math.floor(second / 86_400)] + times[second % 86_400]
  }
}

export function randomInt(n) {
  return Math.floor(Math.random() * n)
}

/** Inserts rows through one prepared statement of ROWS_PER_STATEMENT rows, in one transaction. */
const ROWS_PER_STATEMENT = 100

export function bulk(db, table, columns, produce) {
  const row = `(${columns.map(() => '?').join(',')})`
  const statement = (rows) =>
    db.prepare(`insert into ${table} (${columns.join(',')}) values ${Array(rows).fill(row).join(',')}`)
  const full = statement(ROWS_PER_STATEMENT)
  const width = columns.length
  const batch = new Array(ROWS_PER_STATEMENT * width)
  let filled = 0
  db.transaction(() => {
    produce((...values) => {
      for (let i = 0; i < width; i++) batch[filled * width + i] = values[i]
      if (++filled === ROWS_PER_STATEMENT) {
        full.run(batch)
        filled = 0
      }
    })
    if (filled > 0) statement(filled).run(batch.slice(0, filled * width))
  })()
}

/**
 * Makes a reused dataset start every run alike: the disclosure log and the request log written by
 * the last run are emptied and key usage times cleared. (Enrolls of the last run stay: they only change tiers.)
 * The catalog scenarios and the scaling datasets start from this empty log; progress and enroll
 * run on copies whose log holds a given number of rows (disclosure-dataset.mjs).
 */
export function resetDataset(file) {
  const db = new SQLite(file)
  try {
    db.pragma('busy_timeout = 5000')
    const removed = db.prepare('delete from disclosures').run().changes
    db.prepare('delete from request_log').run()
    db.prepare('update api_keys set last_used_at = null where last_used_at is not null').run()
    db.pragma('wal_checkpoint(TRUNCATE)')
    return removed
  } finally {
    db.close()
  }
}

/**
 * Read at most this much of a database file into the page cache: a quarter of the machine's
 * memory, at least 2 GB. The 20M-row dataset (3.6 GB) must be read whole: with only its first
 * 2 GB read, its progress row measured the disk (0.59 of the 2M figure at 76% CPU; 1.0 once
 * the whole file was read).
 */
const WARM_LIMIT_BYTES = Math.max(2 * 1024 ** 3, os.totalmem() / 4)

/**
 * Reads a database file once, front to back (up to WARM_LIMIT_BYTES), so that the first scenario on it does
 * not pay for disk reads that every later one is spared: a dataset copied or generated a moment
 * ago, or not read since the machine started, is not in the page cache. The dataset's own tables
 * come first in the file (a log copy appends its disclosure rows after them). Returns seconds.
 */
export function warmPageCache(file) {
  const started = performance.now()
  const fd = fs.openSync(file, 'r')
  try {
    const buffer = Buffer.allocUnsafe(16 * 1024 * 1024)
    let position = 0
    while (position < WARM_LIMIT_BYTES) {
      const read = fs.readSync(fd, buffer, 0, buffer.length, position)
      if (read === 0) break
      position += read
    }
  } finally {
    fs.closeSync(fd)
  }
  return (performance.now() - started) / 1000
}

/** The dataset opened read-only, to copy its rows into PostgreSQL. */
export function openDatasetReadOnly(file) {
  return new SQLite(file, { readonly: true })
}
