/**
 * A school leaving while the service serves (SQLite, real processes): `curriculum students erase
 * --file` commits short batches and leaves the write lock free between them, so progress reads
 * made meanwhile (each writes its disclosure row, and so waits for the lock) all succeed and keep
 * being answered all through the erase; every student of the file is erased, with an audit row
 * each, and every organisation it was linked to is told. The latency promise (p99 within 100 ms)
 * is a figure of bench/erase-under-load.mjs, 10,000 students on a machine doing nothing else: the
 * suite shares its cores with another test file, and timing it here only measured that.
 */
import { randomUUID } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { Storage } from '../../src/storage/connection.js'
import { linkStudents, upsertProgress, upsertStudents } from '../../src/storage/student-import-repository.js'
import { inTransaction } from '../../src/storage/transaction.js'
import { type RunningCli, startCli } from '../cli/cli-harness.js'
import { bearer, createTestStorage, freshDatabaseUrl, seedFixtures, STUDENTS, tempDir } from '../helper.js'
import { type RunningServer, startServerForLoad } from '../server/process.js'
import { waitFor } from '../support/wait-for.js'
import { readWhile } from '../support/progress-reads.js'

const STUDENT_COUNT = 1500
const ENTRIES = 10
/**
 * How many reads are answered alone first, so that they are under way when the erase starts
 * (counted, not timed: a loaded machine makes them slow, not absent).
 */
const ALONE_READS = 200
const CLIENTS = 8

const opened: Storage[] = []
afterAll(async () => {
  for (const storage of opened) await storage.close()
})

describe('erasing a school under load', () => {
  it(`answers every progress read, all through, while ${STUDENT_COUNT.toLocaleString('en-US')} students are erased in batches`, async () => {
    const url = freshDatabaseUrl('')
    const storage = await createTestStorage({ url })
    opened.push(storage)
    const fixtures = await seedFixtures(storage, Date.now())
    const ids = Array.from({ length: STUDENT_COUNT }, () => randomUUID())
    const lessons = (await storage.db.selectFrom('lessons').select('slug').orderBy('position').execute()).map(
      (row) => row.slug,
    )
    const at = new Date().toISOString()
    await inTransaction(storage.db, async (trx) => {
      await upsertStudents(
        trx,
        ids.map((id) => ({ id, firstName: 'Sam', tier: 'builder' as const })),
        Date.now(),
      )
      await linkStudents(
        trx,
        ids.flatMap((studentId, i) => [
          { studentId, organisationId: fixtures.orgs.acme },
          ...(i % 2 === 0 ? [{ studentId, organisationId: fixtures.orgs.beta }] : []),
        ]),
        Date.now(),
      )
      await upsertProgress(
        trx,
        ids.flatMap((studentId) =>
          lessons.slice(0, ENTRIES).map((lessonSlug) => ({
            studentId,
            lessonSlug,
            status: 'completed' as const,
            xp: 10,
            timeSeconds: 60,
            startedAt: at,
            completedAt: at,
          })),
        ),
        Date.now(),
      )
    })
    const file = path.join(tempDir(), 'leaving.csv')
    fs.writeFileSync(file, `id\n${ids.join('\n')}\n`)

    let server: RunningServer | undefined
    let eraser: RunningCli | undefined
    const latencies: number[] = []
    const answeredAt: number[] = []
    const statuses: number[] = []
    let eraseStarted = 0
    let eraseEnded = 0
    try {
      server = await startServerForLoad(url)
      const baseUrl = server.baseUrl
      let running = true
      const progress = `${baseUrl}/api/v1/students/${STUDENTS.ada}/progress`
      const client = () =>
        readWhile(progress, bearer(fixtures.keys.read), () => running, { statuses, latencies, answeredAt })
      const clients = Array.from({ length: CLIENTS }, () => client())
      await waitFor(() => statuses.length >= ALONE_READS, { what: `${ALONE_READS} reads answered` })
      eraseStarted = performance.now()
      eraser = startCli(['students', 'erase', '--file', file, '--yes', '--json'], { databaseUrl: url })
      void eraser.exited.then(() => {
        eraseEnded = performance.now()
        running = false
      })
      await Promise.all(clients)
      const { status, stdout, stderr } = await eraser.exited
      expect(status, stderr).toBe(0)
      const outcome = JSON.parse(stdout)
      expect(outcome).toMatchObject({ ok: true, erased: STUDENT_COUNT, links: STUDENT_COUNT * 1.5 })
      // At most 500 students a batch on SQLite.
      expect(outcome.batches).toBeGreaterThanOrEqual(STUDENT_COUNT / 500)
    } finally {
      eraser?.stop()
      await server?.stop()
    }
    expect(statuses.length).toBeGreaterThan(100)
    expect(statuses.filter((status) => status !== 200)).toEqual([])
    // Reads wait for the write lock, so one long transaction would leave a stretch as long as the
    // erase with no read answered; short batches leave only short ones.
    const during = answeredAt.filter((at) => at > eraseStarted && at < eraseEnded)
    const edges = [eraseStarted, ...during, eraseEnded]
    const longestQuiet = Math.max(...edges.slice(1).map((at, i) => at - edges[i]!))
    const span = eraseEnded - eraseStarted
    const sorted = [...latencies].sort((a, b) => a - b)
    const figures =
      `erase ${span.toFixed(0)} ms, ${during.length} reads answered meanwhile, longest stretch without one ` +
      `${longestQuiet.toFixed(0)} ms; p99 of all reads ${sorted[Math.floor(sorted.length * 0.99)]!.toFixed(1)} ms`
    console.info(`[erase under load] ${figures}`)
    expect(during.length, figures).toBeGreaterThan(100)
    expect(longestQuiet, figures).toBeLessThan(span / 2)

    const count = async (query: Promise<{ n: number | string }>) => Number((await query).n)
    expect(
      await count(
        storage.db
          .selectFrom('students')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow(),
      ),
    ).toBe(4)
    expect(
      await count(
        storage.db
          .selectFrom('audit_log')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('action', '=', 'students.erase')
          .executeTakeFirstOrThrow(),
      ),
    ).toBe(STUDENT_COUNT)
    expect(
      await count(
        storage.db
          .selectFrom('student_changes')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('kind', '=', 'student_deleted')
          .executeTakeFirstOrThrow(),
      ),
    ).toBe(STUDENT_COUNT * 1.5)
  }, 120_000)
})
