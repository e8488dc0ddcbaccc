/**
 * Unlinking and erasing students: each organisation concerned is told once, in its change feed
 * and by webhook, with the id only; an erased student's first name, progress, links and changes
 * are gone from every table (and, on SQLite, from the files' bytes after a checkpoint), while the
 * disclosure log keeps its rows; sandbox students are refused.
 */
import { randomBytes } from 'node:crypto'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isoAt } from '../../src/clock.js'
import { eraseInBatches } from '../../src/cli/commands/students/student-erasure.js'
import { createSandbox } from '../../src/cases/sandbox.js'
import type { Storage } from '../../src/storage/connection.js'
import { recordDisclosures } from '../../src/storage/disclosure-log.js'
import { sandboxStudents } from '../../src/storage/sandbox-repository.js'
import { pageStudentChanges, type StudentChange } from '../../src/storage/student-change-log.js'
import { linkStudents, upsertProgress, upsertStudents } from '../../src/storage/student-import-repository.js'
import { ERASED_REASON } from '../../src/storage/student-removal-repository.js'
import { eraseStudents, SandboxStudentError } from '../../src/cases/erasure.js'
import { unlinkStudent } from '../../src/cases/unlink.js'
import { createEndpoint } from '../../src/storage/webhook-endpoint-repository.js'
import { announceStudentChanges } from '../../src/storage/webhook-repository.js'
import { inTransaction } from '../../src/storage/transaction.js'
import { createTestStorage, type Fixtures, freshDatabaseUrl, START, STUDENTS, seedFixtures } from '../helper.js'
import { columnsHolding, sqliteFilesHolding } from '../support/database-scan.js'

const MINUTE = 60_000

describe('unlinking and erasing students', () => {
  let storage: Storage
  let url: string
  let fixtures: Fixtures
  let now = START

  beforeAll(async () => {
    url = freshDatabaseUrl()
    storage = await createTestStorage({ url })
    fixtures = await seedFixtures(storage, START)
  })
  afterAll(async () => storage?.close())

  const later = () => (now += MINUTE)

  /** Every item of an organisation's feed from the beginning, through pages of `limit` within `window` numbers. */
  async function feedOf(organisationId: string, limit = 500, window?: number): Promise<StudentChange[]> {
    const all: StudentChange[] = []
    let after = 0
    for (;;) {
      const page = (await pageStudentChanges(storage.db, { organisationId, sandbox: false }, after, limit, window))!
      expect(page.changes.length).toBeLessThanOrEqual(limit)
      all.push(...page.changes)
      after = page.next
      if (!page.hasMore) return all
    }
  }
  const noticesOf = async (organisationId: string) =>
    (await feedOf(organisationId)).filter((item) => item.type === 'student_unlinked' || item.type === 'student_deleted')

  /** A new real student with a unique first name, progress, linked to `organisations`. */
  async function newStudent(organisations: string[]): Promise<{ id: string; name: string }> {
    const id = crypto.randomUUID()
    const name = `Erasemark${randomBytes(6).toString('hex')}`
    const at = later()
    await upsertStudents(storage.db, [{ id, firstName: name, tier: 'builder' }], at)
    await linkStudents(
      storage.db,
      organisations.map((organisationId) => ({ studentId: id, organisationId })),
      at,
    )
    await upsertProgress(
      storage.db,
      [
        {
          studentId: id,
          lessonSlug: 'builder/b1-what-is-an-algorithm',
          status: 'completed',
          xp: 120,
          timeSeconds: 600,
          startedAt: isoAt(at - MINUTE),
          completedAt: isoAt(at),
        },
      ],
      at,
    )
    return { id, name }
  }

  it('unlinks a student: the organisation alone gets one student_unlinked notice, with the id and time only', async () => {
    const before = (await feedOf(fixtures.orgs.beta)).length
    const at = later()
    expect(await unlinkStudent(storage.db, STUDENTS.ben, fixtures.orgs.acme, at)).toEqual({
      unlinked: true,
      webhooks: 0,
    })
    const links = await storage.db
      .selectFrom('student_organisations')
      .select('organisation_id')
      .where('student_id', '=', STUDENTS.ben)
      .execute()
    expect(links.map((link) => link.organisation_id)).toEqual([fixtures.orgs.beta])
    const acme = await feedOf(fixtures.orgs.acme)
    const notice = acme.at(-1)!
    expect(notice).toEqual({
      sequence: notice.sequence,
      type: 'student_unlinked',
      studentId: STUDENTS.ben,
      changedAt: isoAt(at),
    })
    // Ben's own changes are no longer Acme's to see; Beta, where Ben stays, sees them and no notice.
    expect(acme.filter((item) => item.studentId === STUDENTS.ben)).toEqual([notice])
    const beta = await feedOf(fixtures.orgs.beta)
    expect(beta).toHaveLength(before)
    expect(beta.filter((item) => item.studentId === STUDENTS.ben).length).toBeGreaterThan(0)
    expect(await noticesOf(fixtures.orgs.beta)).toEqual([])

    // Again: nothing is linked, so nothing changes and nobody is told twice.
    expect(await unlinkStudent(storage.db, STUDENTS.ben, fixtures.orgs.acme, later())).toEqual({
      unlinked: false,
      webhooks: 0,
    })
    expect(await noticesOf(fixtures.orgs.acme)).toEqual([notice])
  })

  it('refuses to unlink from a sandbox, and from an organisation that does not exist', async () => {
    const sandbox = await createSandbox(storage.db, 'unlink@example.org', later())
    const [synthetic] = await sandboxStudents(storage.db, sandbox.id)
    await expect(unlinkStudent(storage.db, synthetic!.id, sandbox.id, later())).rejects.toThrow(/sandbox/)
    await expect(unlinkStudent(storage.db, STUDENTS.ada, crypto.randomUUID(), later())).rejects.toThrow(
      /no organisation/,
    )
  })

  it('erases a student: name, progress, links and changes go; each linked organisation is told once; disclosures stay', async () => {
    const { id, name } = await newStudent([fixtures.orgs.acme, fixtures.orgs.beta])
    const hooks = await Promise.all(
      [fixtures.orgs.acme, fixtures.orgs.beta, fixtures.orgs.gamma].map(async (organisationId) => {
        const { endpoint } = await createEndpoint(
          storage.db,
          {
            organisationId,
            mode: 'live',
            url: 'https://hooks.example.org/in',
            events: ['progress.updated', 'student.deleted'],
          },
          later(),
        )
        return endpoint
      }),
    )
    // A delivery about the student sent already, and one still queued: both held its progress.
    await inTransaction(storage.db, (trx) =>
      announceStudentChanges(
        trx,
        [
          {
            type: 'progress_updated',
            studentId: id,
            changedAt: isoAt(now),
            entry: {
              lessonSlug: 'builder/b2-loops-save-time',
              status: 'in_progress',
              xp: 7,
              timeSeconds: 70,
              startedAt: isoAt(now),
              completedAt: null,
            },
          },
        ],
        later(),
      ),
    )
    await storage.db
      .updateTable('webhook_deliveries')
      .set({ state: 'delivered', last_response: `thanks for ${name}` })
      .where('endpoint_id', '=', hooks[0]!.id)
      .execute()
    const access = {
      at: later(),
      requestId: 'req-before',
      keyId: fixtures.keyIds.read,
      organisationId: fixtures.orgs.acme,
    }
    await inTransaction(storage.db, (trx) => recordDisclosures(trx, access, [id], 'progress.read', 'disclosed'))
    expect((await columnsHolding(storage, name)).sort()).toEqual([
      'students.first_name',
      'webhook_deliveries.last_response',
    ])

    const at = later()
    const outcome = await eraseStudents(storage.db, [id, STUDENTS.nobody], at)
    expect(outcome).toEqual({
      erased: [{ id, organisations: [fixtures.orgs.acme, fixtures.orgs.beta].sort(), progress: 1 }],
      missing: [STUDENTS.nobody],
      changes: 2,
      cancelledDeliveries: 1,
      webhooks: 2,
    })
    const count = async (table: 'students' | 'progress' | 'student_organisations') =>
      Number(
        (
          await storage.db
            .selectFrom(table)
            .select((eb) => eb.fn.countAll().as('n'))
            .where(table === 'students' ? 'id' : 'student_id', '=', id)
            .executeTakeFirstOrThrow()
        ).n,
      )
    expect([await count('students'), await count('progress'), await count('student_organisations')]).toEqual([0, 0, 0])
    const changes = await storage.db.selectFrom('student_changes').selectAll().where('student_id', '=', id).execute()
    expect(changes.map((row) => [row.kind, row.organisation_id, row.tier, row.lesson_slug]).sort()).toEqual(
      [
        ['student_deleted', fixtures.orgs.acme, null, null],
        ['student_deleted', fixtures.orgs.beta, null, null],
      ].sort(),
    )
    for (const organisationId of [fixtures.orgs.acme, fixtures.orgs.beta])
      expect((await noticesOf(organisationId)).filter((item) => item.studentId === id)).toEqual([
        { sequence: expect.any(Number), type: 'student_deleted', studentId: id, changedAt: isoAt(at) },
      ])
    expect(await noticesOf(fixtures.orgs.gamma)).toEqual([])

    const deliveries = await storage.db
      .selectFrom('webhook_deliveries')
      .select(['endpoint_id', 'event_type', 'state', 'payload', 'last_error', 'last_response'])
      .where('student_id', '=', id)
      .orderBy('created_at')
      .orderBy('endpoint_id')
      .execute()
    const endpointOf = (endpointId: string) => hooks.findIndex((hook) => hook.id === endpointId)
    expect(
      deliveries.map((d) => [endpointOf(d.endpoint_id), d.event_type, d.state, d.last_error, d.last_response]).sort(),
    ).toEqual(
      [
        [0, 'progress.updated', 'delivered', null, null],
        [1, 'progress.updated', 'not_sent', ERASED_REASON, null],
        [0, 'student.deleted', 'pending', null, null],
        [1, 'student.deleted', 'pending', null, null],
      ].sort(),
    )
    for (const d of deliveries)
      if (d.event_type === 'student.deleted') expect(JSON.parse(d.payload).data).toEqual({ profileId: id })
      else expect(d.payload).toBe('{"erased":true}')

    const disclosures = await storage.db.selectFrom('disclosures').selectAll().where('student_id', '=', id).execute()
    expect(disclosures.map((row) => row.request_id)).toEqual(['req-before'])
    expect(await columnsHolding(storage, name)).toEqual([])
    if (storage.engine === 'sqlite') {
      await sql`pragma wal_checkpoint(truncate)`.execute(storage.db)
      expect(sqliteFilesHolding(url, name)).toEqual([])
    }

    // Again: nobody by that id any more, nothing changes and nobody is told twice.
    expect(await eraseStudents(storage.db, [id], later())).toMatchObject({ erased: [], missing: [id], webhooks: 0 })
  })

  it('erases a file of students in committed batches, each student audited in its batch, on either engine', async () => {
    const ids: string[] = []
    const at = later()
    for (let from = 0; from < 450; from += 150) {
      const part = Array.from({ length: 150 }, () => crypto.randomUUID())
      await upsertStudents(
        storage.db,
        part.map((id) => ({ id, firstName: 'Sam', tier: 'explorer' as const })),
        at,
      )
      await linkStudents(
        storage.db,
        part.flatMap((studentId, i) => [
          { studentId, organisationId: fixtures.orgs.gamma },
          ...(i % 3 === 0 ? [{ studentId, organisationId: fixtures.orgs.beta }] : []),
        ]),
        at,
      )
      ids.push(...part)
    }
    const recorded: string[] = []
    const totals = await eraseInBatches(storage, [...ids, STUDENTS.nobody], {
      now: later(),
      record: async (trx, student) => {
        expect(trx.isTransaction).toBe(true)
        recorded.push(student.id)
      },
    })
    expect(totals).toMatchObject({ erased: 450, missing: [STUDENTS.nobody], links: 600, progress: 0, changes: 450 })
    expect(totals.batches).toBeGreaterThan(1)
    expect(recorded.sort()).toEqual([...ids].sort())
    const gamma = (await noticesOf(fixtures.orgs.gamma)).filter((item) => item.type === 'student_deleted')
    expect(gamma).toHaveLength(450)
    const left = await storage.db.selectFrom('students').select('id').where('id', 'in', ids.slice(0, 100)).execute()
    expect(left).toEqual([])
  })

  it('refuses sandbox students, erasing nothing of the batch', async () => {
    const sandbox = await createSandbox(storage.db, 'erase@example.org', later())
    const [synthetic] = await sandboxStudents(storage.db, sandbox.id)
    const real = await newStudent([fixtures.orgs.acme])
    const refused = await eraseStudents(storage.db, [real.id, synthetic!.id], later()).catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(SandboxStudentError)
    expect((refused as SandboxStudentError).ids).toEqual([synthetic!.id])
    const left = await storage.db
      .selectFrom('students')
      .select('id')
      .where('id', 'in', [real.id, synthetic!.id])
      .execute()
    expect(left).toHaveLength(2)
  })
})
