/**
 * The end of a district-sized agreement: a partner with many students linked and some unlinked
 * or erased earlier, its disposition, the ends as its dashboard reads them, the deletion list read
 * a page at a time, and the certificate of deletion. Prints the time of each and the peak RSS.
 *
 *   node bench/end-of-agreement.mjs [linked=100000] [departed=10000] [root=.]
 *
 * `root` is a checkout with a built dist/. With BENCH_DATABASE_URL=postgres://...?schema=<new
 * schema> it runs on PostgreSQL instead (the schema is dropped at the end).
 */
import { randomUUID } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

const linked = Number(process.argv[2] ?? 100_000)
const departed = Number(process.argv[3] ?? 10_000)
const root = path.resolve(process.argv[4] ?? '.')
const dist = (file) => import(path.join(root, 'dist', file))
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'end-of-agreement-'))
const url = process.env.BENCH_DATABASE_URL ?? `sqlite:${path.join(dir, 'db.sqlite')}`
const DAY = 86_400_000

const { openStorage } = await dist('storage/connection.js')
const { migrate } = await dist('storage/migrate.js')
const { createOrganisation } = await dist('storage/access-repository.js')
const { recordAgreement } = await dist('cases/agreement-record.js')
const { endAgreements } = await dist('cases/agreement-end.js')
const { upsertStudents, linkStudents } = await dist('storage/student-import-repository.js')
const { createEndpoint } = await dist('storage/webhook-endpoint-repository.js')
const { disposeDueAgreements } = await dist('cases/agreement-disposition.js')
const { agreementEnds } = await dist('storage/agreement-end-repository.js')
const { deletionList } = await dist('storage/deletion-list-repository.js')
const { disposedEnd, issueCertificate } = await dist('cases/deletion-certificate.js')
const { loadSigningKey } = await dist('services/signing-keys.js')

const mb = (bytes) => `${Math.round(bytes / 1_048_576)} MB`
async function timed(label, work) {
  const started = performance.now()
  const value = await work()
  console.log(`${label}: ${((performance.now() - started) / 1000).toFixed(2)} s`)
  return value
}

const storage = openStorage(url)
try {
  await migrate(storage)
  const start = Date.now() - 400 * DAY
  const org = await createOrganisation(storage.db, 'District partner', start)
  await recordAgreement(
    storage.db,
    { organisationId: org.id, signedAt: start, expiresAt: null, documentRef: 'DSA-BENCH', dispositionDays: 30 },
    start,
  )
  await createEndpoint(
    storage.db,
    { organisationId: org.id, mode: 'live', url: 'https://hooks.example.org/in', events: ['student.unlinked'] },
    start,
  )
  const ids = Array.from({ length: linked + departed }, () => randomUUID())
  await timed(`set up ${linked + departed} students`, async () => {
    for (let from = 0; from < ids.length; from += 5000) {
      const part = ids.slice(from, from + 5000)
      await upsertStudents(
        storage.db,
        part.map((id) => ({ id, firstName: 'Kid', tier: 'explorer' })),
        start,
      )
      await linkStudents(
        storage.db,
        part.map((studentId) => ({ studentId, organisationId: org.id })),
        start,
      )
    }
  })
  const leaving = ids.slice(linked)
  await timed(`unlink ${departed / 2} and erase ${departed / 2} earlier`, async () => {
    for (const id of leaving.slice(0, departed / 2)) await unlinkStudent(storage.db, id, org.id, start + DAY)
    for (let from = departed / 2; from < departed; from += 500)
      await eraseStudents(storage.db, leaving.slice(from, Math.min(from + 500, departed)), start + 2 * DAY)
  })
  await endAgreements(storage.db, { organisationId: org.id }, start + 100 * DAY)
  const now = start + 200 * DAY
  await timed('disposition', () => disposeDueAgreements(storage.db, now))
  const [end] = await timed('agreement ends (the dashboard read)', () => agreementEnds(storage.db, now, org.id))
  console.log(`  students ${end.students}: ${JSON.stringify(end.coverage)}`)
  await timed('deletion list, every page', async () => {
    let n = 0
    for await (const page of deletionList(storage.db, end)) n += page.length
    if (n !== end.students) throw new Error(`listed ${n}, counted ${end.students}`)
  })
  console.log(
    `  RSS before the certificate: ${mb(process.memoryUsage().rss)}, max so far ${mb(process.resourceUsage().maxRSS * 1024)}`,
  )
  const issued = await timed('certificate of deletion', async () =>
    issueCertificate(storage.db, await disposedEnd(storage.db, org.id, now), await loadSigningKey(storage.db), now),
  )
  console.log(`  certificate: ${mb(Buffer.byteLength(issued.file))}`)
  // The process's whole life: better-sqlite3 answers synchronously, so a sampling timer would not run.
  console.log(`peak RSS: ${mb(process.resourceUsage().maxRSS * 1024)}`)
} finally {
  if (storage.schema !== undefined) await storage.db.schema.dropSchema(storage.schema).cascade().execute()
  await storage.close()
  fs.rmSync(dir, { recursive: true, force: true })
}
