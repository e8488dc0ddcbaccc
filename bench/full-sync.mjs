/**
 * A whole district synced from scratch, as a partner's client would do it: the roster in pages
 * of 500, then the change feed from the beginning in pages of 500, counting requests and
 * seconds; first with no rate limit (what the service itself costs), then within the default
 * limit of 100 requests a minute, pacing on the `RateLimit` header as a well-behaved client does.
 *
 *   node bench/full-sync.mjs [students=10000] [entriesPerStudent=10] [--no-limit-run]
 *
 * The database is a fresh SQLite file: the service's migrations and sample catalog, one
 * organisation with an agreement and a `students:read` key, and the students, their links and
 * their progress written by the same repository functions as `curriculum students|links|progress
 * import` (so the change log holds what an import writes: one `tier_changed` per student and one
 * `progress_updated` per entry). Not part of `npm test`.
 */
import { randomUUID } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { buildService } from './lib/build-service.mjs'
import { CATALOG_DIR, DATA_DIR, importDist } from './lib/paths.mjs'
import { serviceEnv, startServer } from './lib/server-process.mjs'

const args = process.argv.slice(2).filter((arg) => !arg.startsWith('--'))
const STUDENTS = Number(args[0] ?? 10_000)
const ENTRIES = Number(args[1] ?? 10)
const LIMITED_RUN = !process.argv.includes('--no-limit-run')
const PAGE = 500
const RATE_LIMIT = 100
const DAY = 86_400_000

function seconds(ms) {
  return (ms / 1000).toFixed(1)
}

async function generate(file) {
  const { openStorage } = await importDist('storage/connection.js')
  const { migrate } = await importDist('storage/migrate.js')
  const { readCatalogDir } = await importDist('catalog/catalog-files.js')
  const { replaceCatalog } = await importDist('storage/catalog-repository.js')
  const { createApiKey, createOrganisation } = await importDist('storage/access-repository.js')
  const { recordAgreement } = await importDist('cases/agreement-record.js')
  const { linkStudents, upsertProgress, upsertStudents } = await importDist('storage/student-import-repository.js')
  const { inTransaction } = await importDist('storage/transaction.js')

  const storage = openStorage(`sqlite:${file}`)
  await migrate(storage)
  const catalog = readCatalogDir(CATALOG_DIR)
  if (!catalog.ok) throw new Error('the sample catalog is invalid')
  await replaceCatalog(storage.db, catalog.catalog)
  const now = Date.now()
  const organisation = await createOrganisation(storage.db, 'District', now)
  await recordAgreement(
    storage.db,
    { organisationId: organisation.id, signedAt: now - DAY, expiresAt: null, documentRef: 'DSA-bench' },
    now,
  )
  const { key } = await createApiKey(
    storage.db,
    { organisationId: organisation.id, name: 'sync', scopes: ['students:read'], expiresAt: null },
    now,
  )
  const tiers = ['explorer', 'builder', 'innovator']
  const lessonsOf = new Map(tiers.map((tier) => [tier, catalog.catalog.lessons.filter((l) => l.tier === tier)]))
  const started = performance.now()
  // Batches of 2,000 students, one transaction each, as the import CLI writes.
  for (let from = 0; from < STUDENTS; from += 2000) {
    const students = Array.from({ length: Math.min(2000, STUDENTS - from) }, (_, i) => ({
      id: randomUUID(),
      firstName: 'Sam',
      tier: tiers[(from + i) % 3],
    }))
    const progress = students.flatMap((student) =>
      lessonsOf
        .get(student.tier)
        .slice(0, ENTRIES)
        .map((lesson, index) => {
          const startedAt = now - (ENTRIES - index) * DAY
          const completed = index < ENTRIES - 1
          return {
            studentId: student.id,
            lessonSlug: lesson.slug,
            status: completed ? 'completed' : 'in_progress',
            xp: completed ? 100 : 20,
            timeSeconds: 600,
            startedAt: new Date(startedAt).toISOString(),
            completedAt: completed ? new Date(startedAt + 3_600_000).toISOString() : null,
          }
        }),
    )
    await inTransaction(storage.db, async (trx) => {
      await upsertStudents(trx, students, now)
      await linkStudents(
        trx,
        students.map((student) => ({ studentId: student.id, organisationId: organisation.id })),
        now,
      )
    })
    for (let i = 0; i < progress.length; i += 2000)
      await inTransaction(storage.db, (trx) => upsertProgress(trx, progress.slice(i, i + 2000), now))
  }
  const counts = {
    students: Number(
      (
        await storage.db
          .selectFrom('students')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirst()
      ).n,
    ),
    progress: Number(
      (
        await storage.db
          .selectFrom('progress')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirst()
      ).n,
    ),
    changes: Number(
      (
        await storage.db
          .selectFrom('student_changes')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirst()
      ).n,
    ),
  }
  await storage.close()
  return { key, counts, generatedMs: performance.now() - started }
}

/** The `"default";r=..;t=..` part of a RateLimit field. */
function ownQuota(response) {
  const match = /"default";r=(\d+);t=(\d+)/.exec(response.headers.get('ratelimit') ?? '')
  return match === null ? undefined : { remaining: Number(match[1]), resetSeconds: Number(match[2]) }
}

/** A full sync through `baseUrl`; with `pace`, waits whenever the key's quota is used up. */
async function fullSync(baseUrl, key, pace) {
  const headers = { authorization: `Bearer ${key}` }
  const requests = { roster: 0, feed: 0, refused: 0 }
  let waitedMs = 0
  let requestMs = 0
  async function get(url) {
    for (;;) {
      const started = performance.now()
      const response = await fetch(`${baseUrl}${url}`, { headers })
      const body = await response.json()
      requestMs += performance.now() - started
      const quota = ownQuota(response)
      if (response.status === 429) {
        requests.refused++
        const wait = Number(response.headers.get('retry-after') ?? 1) * 1000
        waitedMs += wait
        await new Promise((resolve) => setTimeout(resolve, wait))
        continue
      }
      if (response.status !== 200) throw new Error(`${url}: ${response.status} ${JSON.stringify(body)}`)
      if (pace && quota !== undefined && quota.remaining === 0) {
        const wait = quota.resetSeconds * 1000
        waitedMs += wait
        await new Promise((resolve) => setTimeout(resolve, wait))
      }
      return body
    }
  }

  const started = performance.now()
  const students = new Map()
  let cursor = null
  do {
    const page = await get(`/api/v1/students?limit=${PAGE}${cursor === null ? '' : `&cursor=${cursor}`}`)
    requests.roster++
    for (const student of page.students) students.set(student.profileId, student)
    cursor = page.next
  } while (cursor !== null)

  const progress = new Map()
  let changes = 0
  let page = { hasMore: true, next: undefined }
  let url = `/api/v1/progress/changes?from=beginning&limit=${PAGE}`
  while (page.hasMore) {
    page = await get(url)
    requests.feed++
    changes += page.changes.length
    for (const change of page.changes) {
      if (change.type === 'progress_updated') progress.set(`${change.profileId} ${change.progress.lessonSlug}`, change)
      else students.get(change.profileId).tier = change.tier
    }
    url = `/api/v1/progress/changes?cursor=${page.next}&limit=${PAGE}`
  }
  return {
    seconds: (performance.now() - started) / 1000,
    requests,
    waitedMs,
    requestMs,
    students: students.size,
    progress: progress.size,
    changes,
  }
}

const dir = path.join(DATA_DIR, 'full-sync')
fs.rmSync(dir, { recursive: true, force: true })
fs.mkdirSync(dir, { recursive: true })
const file = path.join(dir, 'district.db')

console.log('building the service')
buildService()
console.log(`generating ${STUDENTS.toLocaleString('en')} students with ${ENTRIES} progress entries each`)
const { key, counts, generatedMs } = await generate(file)
console.log(
  `  ${counts.students.toLocaleString('en')} students, ${counts.progress.toLocaleString('en')} progress rows, ${counts.changes.toLocaleString('en')} changes logged, in ${seconds(generatedMs)} s`,
)

async function run(label, rateLimit, pace) {
  const server = await startServer({
    label,
    env: serviceEnv({ DATABASE_URL: `sqlite:${file}`, HOST: '127.0.0.1', RATE_LIMIT: String(rateLimit) }),
  })
  try {
    const result = await fullSync(server.baseUrl, key, pace)
    if (result.students !== counts.students || result.progress !== counts.progress || result.changes !== counts.changes)
      throw new Error(`incomplete sync: ${JSON.stringify(result)} against ${JSON.stringify(counts)}`)
    return result
  } finally {
    await server.stop()
  }
}

console.log('full sync, no rate limit (the service alone)')
const free = await run('unlimited', 1_000_000, false)
const total = free.requests.roster + free.requests.feed
console.log(
  `  ${total} requests (${free.requests.roster} roster pages, ${free.requests.feed} feed pages) in ${seconds(free.seconds * 1000)} s, ${(free.requestMs / total).toFixed(0)} ms a request on average`,
)

// Within a rolling window of 100 requests a minute, request n (from 0) cannot go before
// floor(n / 100) minutes have passed: the least possible time for the whole sync.
const floorSeconds = Math.floor((total - 1) / RATE_LIMIT) * 60
let limited
if (LIMITED_RUN) {
  console.log(`full sync within ${RATE_LIMIT} requests a minute (paced on the RateLimit header; takes a few minutes)`)
  limited = await run('limited', RATE_LIMIT, true)
  console.log(
    `  ${limited.requests.roster + limited.requests.feed} requests in ${seconds(limited.seconds * 1000)} s, ${seconds(limited.waitedMs)} s of it waiting for the quota, ${limited.requests.refused} refused with 429`,
  )
}

console.log(`
Result (for bench/RESULTS.md):

| Full sync | Students | Progress entries | Changes | Requests | No rate limit | Within ${RATE_LIMIT} requests/minute |
|---|---|---|---|---|---|---|
| roster pages of ${PAGE} + change feed from the beginning, pages of ${PAGE}, SQLite, one key | ${counts.students.toLocaleString('en')} | ${counts.progress.toLocaleString('en')} | ${counts.changes.toLocaleString('en')} | ${total} (${free.requests.roster} + ${free.requests.feed}) | ${seconds(free.seconds * 1000)} s | ${limited === undefined ? `at least ${floorSeconds} s (not run)` : `${seconds(limited.seconds * 1000)} s (at least ${floorSeconds} s by the limit alone)`} |
`)
