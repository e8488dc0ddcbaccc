/**
 * A school leaving while the service serves (SQLite, real processes): `curriculum students erase
 * --file` commits short batches and leaves the write lock free between them, so progress reads
 * made meanwhile (each writes its disclosure row, and so waits for the lock) all succeed, 99 in
 * 100 within 100 ms (or twice the p99 of the same reads just before, when a loaded machine makes
 * those slower already); every student of the file is
 * erased, with an audit row each, and every organisation it was linked to is told.
 * bench/erase-under-load.mjs measures 10,000 students.
 */
import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { Storage } from '../../src/storage/connection.js'
import { linkStudents, upsertProgress, upsertStudents } from '../../src/storage/student-import-repository.js'
import { inTransaction } from '../../src/storage/transaction.js'
import { CLI } from '../cli/cli-harness.js'
import { bearer, createTestStorage, freshDatabaseUrl, seedFixtures, STUDENTS, tempDir } from '../helper.js'
import { type RunningServer, startServer } from '../server/process.js'

const STUDENT_COUNT = 1500
const ENTRIES = 10
/** How long the reads run alone first, for their own p99 on this machine now. */
const ALONE_MS = 1500
const CLIENTS = 8

const opened: Storage[] = []
afterAll(async () => {
  for (const storage of opened) await storage.close()
})

describe('erasing a school under load', () => {
  it(`keeps progress reads' p99 within 100 ms while ${STUDENT_COUNT.toLocaleString('en-US')} students are erased`, async () => {
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
    let eraser: ReturnType<typeof spawn> | undefined
    const latencies: number[] = []
    const alone: number[] = []
    const statuses: number[] = []
    try {
      server = await startServer({
        DATABASE_URL: url,
        SEED_DEMO: 'false',
        RATE_LIMIT: '1000000',
        ORGANISATION_RATE_LIMIT: '1000000',
      })
      const baseUrl = server.baseUrl
      let running = true
      const client = async () => {
        while (running) {
          const started = performance.now()
          const res = await fetch(`${baseUrl}/api/v1/students/${STUDENTS.ada}/progress`, {
            headers: bearer(fixtures.keys.read),
          })
          await res.arrayBuffer()
          latencies.push(performance.now() - started)
          statuses.push(res.status)
        }
      }
      const clients = Array.from({ length: CLIENTS }, () => client())
      await new Promise((resolve) => setTimeout(resolve, ALONE_MS))
      alone.push(...latencies.splice(0))
      eraser = spawn(process.execPath, [CLI, 'students', 'erase', '--file', file, '--yes', '--json'], {
        env: { PATH: process.env.PATH, DATABASE_URL: url },
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      let stdout = ''
      let stderr = ''
      eraser.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
      eraser.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
      const exited = new Promise<number | null>((resolve) => eraser!.once('exit', (code) => resolve(code)))
      void exited.then(() => (running = false))
      await Promise.all(clients)
      expect(await exited, stderr).toBe(0)
      expect(JSON.parse(stdout)).toMatchObject({ ok: true, erased: STUDENT_COUNT, links: STUDENT_COUNT * 1.5 })
    } finally {
      if (eraser !== undefined && eraser.exitCode === null && eraser.signalCode === null) eraser.kill('SIGKILL')
      await server?.stop()
    }
    expect(statuses.length).toBeGreaterThan(100)
    expect(statuses.filter((status) => status !== 200)).toEqual([])
    const p99 = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length * 0.99)]!
    const during = `p99 of ${latencies.length} reads ${p99(latencies).toFixed(1)} ms (max ${Math.max(...latencies).toFixed(1)})`
    const before = `before: ${alone.length} reads, p99 ${p99(alone).toFixed(1)} ms`
    // The promise is about the p99. That the erase commits in batches is tested on its own
    // (test/storage/student-removal.test.ts, test/cli/student-removal.test.ts); counting the reads
    // slower than the slowest before failed on a quiet machine, one stall holding every client.
    expect(p99(latencies), `${during}; ${before}`).toBeLessThan(Math.max(100, 2 * p99(alone)))

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
