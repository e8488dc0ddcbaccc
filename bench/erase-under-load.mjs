/**
 * A school leaving: `curriculum students erase --file` of many students against a running server
 * (SQLite), while clients read a student's progress through the API (each read writes its
 * disclosure row, so it needs the write lock the erasure's batches take). Prints how long the
 * erasure took and the reads' latency meanwhile.
 *
 *   node bench/erase-under-load.mjs [students=10000] [entries=10] [clients=8] [root=.]
 *
 * `root` is a checkout with a built dist/, so that two builds can be compared. With
 * BENCH_DATABASE_URL=postgres://...?schema=<new schema> it runs on PostgreSQL instead (the schema
 * is dropped at the end).
 */
import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { partnerWithKey, startUnlimitedServer } from './lib/under-load.mjs'

const students = Number(process.argv[2] ?? 10_000)
const entries = Number(process.argv[3] ?? 10)
const clients = Number(process.argv[4] ?? 8)
const root = path.resolve(process.argv[5] ?? '.')
const dist = (file) => import(path.join(root, 'dist', file))
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'erase-under-load-'))
const url = process.env.BENCH_DATABASE_URL ?? `sqlite:${path.join(dir, 'db.sqlite')}`
const READ = '11111111-1111-4111-8111-111111111111'

const { openStorage } = await dist('storage/connection.js')
const { migrate } = await dist('storage/migrate.js')
const { createOrganisation } = await dist('storage/access-repository.js')
const { recordAgreement } = await dist('cases/agreement-record.js')
const { upsertStudents, linkStudents, upsertProgress } = await dist('storage/student-import-repository.js')
const { replaceCatalog } = await dist('storage/catalog-repository.js')
const { readCatalogDir } = await dist('catalog/catalog-files.js')
const { createEndpoint } = await dist('storage/webhook-endpoint-repository.js')

const storage = openStorage(url)
await migrate(storage)
const catalog = readCatalogDir(path.join(root, 'catalog'))
await replaceCatalog(storage.db, catalog.catalog)
const lessons = catalog.catalog.lessons.map((lesson) => lesson.slug)
const now = Date.now()
const { organisation: school, key } = await partnerWithKey(root, storage.db, {
  name: 'School district',
  scopes: ['students:read'],
  now,
})
const partner = await createOrganisation(storage.db, 'Second partner', now)
await recordAgreement(
  storage.db,
  { organisationId: partner.id, signedAt: now - 1000, expiresAt: now + 86_400_000, documentRef: 'DSA' },
  now,
)
// A subscribed endpoint: each erased student's notice is a delivery too (none is sent here).
await createEndpoint(
  storage.db,
  { organisationId: school.id, mode: 'live', url: 'https://hooks.example.org/in', events: ['student.deleted'] },
  now,
)
const ids = Array.from({ length: students }, () => randomUUID())
const at = new Date(now).toISOString()
for (let from = 0; from < ids.length; from += 2000) {
  const part = ids.slice(from, from + 2000)
  await storage.db.transaction().execute(async (trx) => {
    await upsertStudents(
      trx,
      part.map((id) => ({ id, firstName: 'Sam', tier: 'builder' })),
      now,
    )
    // Every student linked to the school, half to a second partner as well.
    await linkStudents(
      trx,
      part.flatMap((studentId, i) => [
        { studentId, organisationId: school.id },
        ...(i % 2 === 0 ? [{ studentId, organisationId: partner.id }] : []),
      ]),
      now,
    )
    await upsertProgress(
      trx,
      part.flatMap((studentId) =>
        lessons.slice(0, entries).map((lessonSlug) => ({
          studentId,
          lessonSlug,
          status: 'completed',
          xp: 10,
          timeSeconds: 60,
          startedAt: at,
          completedAt: at,
        })),
      ),
      now,
    )
  })
}
await upsertStudents(storage.db, [{ id: READ, firstName: 'Ada', tier: 'explorer' }], now)
await linkStudents(storage.db, [{ studentId: READ, organisationId: school.id }], now)
await storage.close()
const file = path.join(dir, 'leaving.csv')
fs.writeFileSync(file, `id\n${ids.join('\n')}\n`)

const server = await startUnlimitedServer(root, url, { LOG_LEVEL: 'info' })
const base = server.baseUrl

const headers = { authorization: `Bearer ${key}` }
let statuses = {}
const latencies = []
let running = true
async function client() {
  while (running) {
    const t0 = performance.now()
    const res = await fetch(`${base}/api/v1/students/${READ}/progress`, { headers })
    await res.arrayBuffer()
    latencies.push(performance.now() - t0)
    statuses[res.status] = (statuses[res.status] ?? 0) + 1
  }
}

try {
  // The reads alone first, for comparison.
  const readers = Array.from({ length: clients }, () => client())
  await new Promise((r) => setTimeout(r, 3000))
  const alone = latencies.splice(0)
  statuses = {}
  const started = performance.now()
  const eraser = spawn(
    process.execPath,
    [path.join(root, 'dist/cli/index.js'), 'students', 'erase', '--file', file, '--yes', '--json'],
    { env: { PATH: process.env.PATH, DATABASE_URL: url }, stdio: ['ignore', 'pipe', 'pipe'] },
  )
  let stdout = ''
  let stderr = ''
  eraser.stdout.on('data', (c) => (stdout += c))
  eraser.stderr.on('data', (c) => (stderr += c))
  const code = await new Promise((resolve) => eraser.on('exit', resolve))
  const seconds = (performance.now() - started) / 1000
  running = false
  await Promise.all(readers)
  const pct = (list, p) => {
    const sorted = [...list].sort((a, b) => a - b)
    return Number(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]?.toFixed(1))
  }
  const summary = code === 0 ? JSON.parse(stdout) : { stdout, stderr }
  console.log(
    JSON.stringify({
      students,
      progressEntries: students * entries,
      clients,
      exit: code,
      eraseSeconds: Number(seconds.toFixed(1)),
      batches: summary.batches,
      longestBatchMs: summary.longestBatchMs,
      log: summary.log,
      readsAlone: { n: alone.length, p50: pct(alone, 0.5), p99: pct(alone, 0.99), max: pct(alone, 1) },
      readsDuringErase: {
        n: latencies.length,
        statuses,
        p50: pct(latencies, 0.5),
        p99: pct(latencies, 0.99),
        max: pct(latencies, 1),
      },
    }),
  )
} finally {
  running = false
  await server.stop()
  fs.rmSync(dir, { recursive: true, force: true })
  const schema = new URL(url).searchParams.get('schema')
  if (url.startsWith('postgres') && schema !== null) {
    const { sql } = await import('kysely')
    const cleanup = openStorage(url)
    await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(cleanup.db)
    await cleanup.close()
  }
}
