/**
 * The backup an operator takes while partners write: the app serves enrolls over a real socket on
 * a SQLite file, as fast as the clients can send them, and `curriculum backup` copies the database
 * meanwhile from a process of its own. Restored into a fresh file, the copy holds every enroll
 * acknowledged (200) before the backup started, each with its disclosure row, and it is one
 * moment's database: every tier change it holds has its disclosure row and no disclosure row
 * lacks its change. The database is large enough that the copy takes many steps, each of which
 * would start the copy over were the server's commits let in between.
 */
import { randomUUID } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import SQLite from 'better-sqlite3'
import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { addLinkedStudents, bearer, buildTestApp } from '../helper.js'
import { cli, jsonOf, tempDir, useCliHarness } from './cli-harness.js'
import { perSuite } from '../support/built.js'

useCliHarness()

const STUDENTS = 40_000
const CLIENTS = 32
/** About 40 MB of pages besides the students: ten steps of the backup at least. */
const FILLER_ROWS = 600

interface Ack {
  studentId: string
  requestId: string
  at: number
}

describe('a backup taken while enrolls are committed at full speed', () => {
  const t = perSuite(() => buildTestApp({ env: { RATE_LIMIT: '1000000', ORGANISATION_RATE_LIMIT: '1000000' } }))

  it('restores into a fresh file holding every enroll acknowledged before it started, with its disclosure row', async () => {
    const { rows } = await sql<{ name: string; file: string }>`pragma database_list`.execute(t.storage.db)
    const databaseUrl = `sqlite:${rows.find((row) => row.name === 'main')!.file}`
    const ids: string[] = Array.from({ length: STUDENTS }, () => randomUUID())
    await addLinkedStudents(t.storage.db, ids, t.fixtures.orgs.acme, 'Sam', t.clock.now())
    // Filler in a table the migrations make: a restore refuses a table of its own.
    await sql`insert into settings (name, value) select 'filler-' || i, hex(randomblob(32768)) from (with recursive
      n(i) as (select 1 union all select i + 1 from n where i < ${FILLER_ROWS}) select i from n)`.execute(t.storage.db)

    // Each client enrolls the next student into another tier: one tier change and one disclosure row each.
    const acks: Ack[] = []
    const failures: string[] = []
    let next = 0
    let stop = false
    const client = async () => {
      while (!stop && next < ids.length) {
        const studentId = ids[next++]!
        const res = await t.send({
          method: 'POST',
          url: `/api/v1/students/${studentId}/enroll`,
          headers: bearer(t.fixtures.keys.write),
          payload: { tier: 'builder' },
        })
        if (res.statusCode === 200)
          acks.push({ studentId, requestId: String(res.headers['x-request-id']), at: performance.now() })
        else failures.push(`${res.statusCode} ${res.body}`)
      }
    }
    const clients = Array.from({ length: CLIENTS }, client)
    while (acks.length < 500) await new Promise((resolve) => setTimeout(resolve, 10))

    const backup = path.join(tempDir(), 'under-load.db')
    const started = performance.now()
    const backedUp = await cli(['backup', backup, '--json'], { databaseUrl })
    const ended = performance.now()
    const unsent = ids.length - next
    stop = true
    await Promise.all(clients)
    expect(backedUp.status, backedUp.stdout + backedUp.stderr).toBe(0)
    expect(jsonOf(backedUp).pages).toBeGreaterThan(10 * 1024)
    expect(failures).toEqual([])
    const before = acks.filter((ack) => ack.at < started)
    const during = acks.filter((ack) => ack.at >= started && ack.at <= ended)
    // The server went on committing while the copy was made, and the copy did not wait for it to stop.
    expect(during.length).toBeGreaterThan(100)
    expect(unsent).toBeGreaterThan(0)

    const restoredFile = path.join(tempDir(), 'restored.db')
    const restored = await cli(['restore', backup, '--json'], { databaseUrl: `sqlite:${restoredFile}` })
    expect(restored.status, restored.stdout + restored.stderr).toBe(0)
    expect(jsonOf(restored)).toMatchObject({ replaced: false, integrity: 'ok' })
    expect(fs.statSync(restoredFile).mode & 0o777).toBe(0o600)

    const database = new SQLite(restoredFile, { readonly: true })
    try {
      // The test's students only: the fixtures hold a builder of their own.
      const mine = new Set(ids)
      const changed = new Set(
        (database.prepare(`select id from students where tier = 'builder'`).all() as { id: string }[])
          .map((r) => r.id)
          .filter((id) => mine.has(id)),
      )
      const disclosed = new Map(
        (
          database
            .prepare(`select request_id, student_id from disclosures where action = 'enroll' and outcome = 'updated'`)
            .all() as { request_id: string; student_id: string }[]
        ).map((row) => [row.request_id, row.student_id]),
      )
      const missing = before.filter(
        (ack) => !changed.has(ack.studentId) || disclosed.get(ack.requestId) !== ack.studentId,
      )
      expect(missing, `${missing.length} of ${before.length} acknowledged enrolls missing`).toEqual([])
      // One moment's database: changes and their disclosure rows, both or neither.
      expect(new Set(disclosed.values())).toEqual(changed)
      expect(changed.size).toBeGreaterThanOrEqual(before.length)
      expect(changed.size).toBeLessThan(acks.length + CLIENTS)
      const lastAudit = database.prepare('select action from audit_log order by id desc limit 2').all()
      expect(lastAudit).toEqual([{ action: 'database.restore' }, { action: 'database.backup' }])
    } finally {
      database.close()
    }
  }, 180_000)
})
