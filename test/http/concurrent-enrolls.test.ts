/**
 * Enrolls of one student sent at once through two app instances, each with storage of its own
 * on one database and listening on a real socket (one answering on the fast path, the other
 * through the router): every 200 must mean that the requested tier was committed, the enrolls
 * serialise on the student's row (the last one committed wins), and each change is in the
 * change feed exactly once.
 *
 * On PostgreSQL at READ COMMITTED, an update conditioned on the tier skipped the row while
 * another enroll held it, without waiting; a read in a fresh snapshot then saw that enroll's
 * tier and answered it as "unchanged", and the requested tier was never written. A trigger the
 * test adds runs after each statement on the students table: it waits while a test holds an
 * advisory lock (to stop an enroll between two statements at will), then pauses up to 2 ms, as
 * a slow network between the service and the database would, so that another commit lands
 * between two statements of an enroll as it does under real load. On SQLite the two instances'
 * connections take turns at the single write lock.
 *
 * The clock moves one millisecond per answer, so many enrolls share a timestamp: whether the
 * tier changed must not be judged from the time.
 */
import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { ManualClock } from '../../src/clock.js'
import { TIER_IDS, type TierId } from '../../src/domain/tiers.js'
import type { TypedApp } from '../../src/http/app-types.js'
import { openStorage, type Storage } from '../../src/storage/connection.js'
import { linkStudents, upsertStudents } from '../../src/storage/student-import-repository.js'
import {
  bearer,
  createTestStorage,
  type Fixtures,
  freshDatabaseUrl,
  requestPathOptions,
  START,
  seedFixtures,
  testConfig,
} from '../helper.js'
import { perSuite } from '../support/built.js'

const ON_POSTGRES = process.env.TEST_DATABASE_URL !== undefined
/** The advisory lock the test holds to stop enrolls between their statements. */
const HELD = 3030
const CLIENTS = 8
const ROUNDS = 40

interface Answer {
  requested: TierId
  tier: string
  updatedAt: string
}

interface TierChange {
  sequence: number
  type: string
  profileId: string
  changedAt: string
  tier?: string
}

describe('concurrent enrolls of one student through two instances', () => {
  const clock = new ManualClock(START)
  const student = randomUUID()
  const another = randomUUID()
  const url = freshDatabaseUrl()
  const storage = perSuite(() => createTestStorage({ url }))
  let other: Storage
  const apps: TypedApp[] = []
  const bases: string[] = []
  let fixtures: Fixtures

  beforeAll(async () => {
    fixtures = await seedFixtures(storage, clock.now())
    await upsertStudents(
      storage.db,
      [student, another].map((id) => ({ id, firstName: 'Sam', tier: 'explorer' as const })),
      clock.now(),
    )
    await linkStudents(
      storage.db,
      [student, another].map((studentId) => ({ studentId, organisationId: fixtures.orgs.acme })),
      clock.now(),
    )
    if (ON_POSTGRES) {
      // After every statement on students, even one that changed no row: a wait while a test
      // holds the advisory lock, then up to 2 ms.
      await sql`create function pause_after_statement() returns trigger language plpgsql as $$
        begin
          perform pg_advisory_xact_lock_shared(${sql.lit(HELD)});
          perform pg_sleep(random() * 0.002);
          return null;
        end $$`.execute(storage.db)
      await sql`create trigger pause_after_students after update on students
        for each statement execute function pause_after_statement()`.execute(storage.db)
    }
    other = openStorage(url)
    const config = testConfig({ RATE_LIMIT: '1000000', ORGANISATION_RATE_LIMIT: '1000000' })
    apps.push(await buildApp(requestPathOptions({ config, storage, clock, logger: false, pollChanges: false }, 'fast')))
    apps.push(
      await buildApp(requestPathOptions({ config, storage: other, clock, logger: false, pollChanges: false }, 'plain')),
    )
    for (const app of apps) bases.push(await app.listen({ host: '127.0.0.1', port: 0 }))
  })

  afterAll(async () => {
    for (const app of apps) await app.close()
    await other?.close()
  })

  const enroll = (base: string, id: string, tier: TierId) =>
    fetch(`${base}/api/v1/students/${id}/enroll`, {
      method: 'POST',
      headers: { ...bearer(fixtures.keys.readWrite), 'content-type': 'application/json' },
      body: JSON.stringify({ tier }),
    })

  it.runIf(ON_POSTGRES)(
    'an enroll back to the tier another enroll is changing waits for it, then changes the tier back',
    async () => {
      let blocked = 0
      let settled = false
      const { pending } = await storage.db.transaction().execute(async (trx) => {
        // The other enroll: it has changed the tier and not yet committed.
        await sql`select pg_advisory_xact_lock(${HELD})`.execute(trx)
        await trx.updateTable('students').set({ tier: 'builder' }).where('id', '=', another).execute()
        const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx)
        const pending = enroll(bases[1]!, another, 'explorer')
        const settle = () => {
          settled = true
        }
        pending.then(settle, settle)
        // Until the enroll waits on this transaction: for the row, or between its statements.
        while (blocked === 0 && !settled) {
          const waiting = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
            where ${rows[0]!.pid}::int = any(pg_blocking_pids(pid))`.execute(storage.db)
          blocked = waiting.rows[0]!.n
        }
        // Not awaited here: it answers only after this transaction commits.
        return { pending }
      })
      const answer = await pending
      expect(answer.status).toBe(200)
      expect(((await answer.json()) as { tier: string }).tier).toBe('explorer')
      const stored = await storage.db
        .selectFrom('students')
        .select('tier')
        .where('id', '=', another)
        .executeTakeFirstOrThrow()
      expect(stored.tier).toBe('explorer')
    },
  )

  it('answers every 200 with the tier asked for, keeps the last committed, and feeds each change once', async () => {
    const key = bearer(fixtures.keys.readWrite)
    const start = await fetch(`${bases[0]}/api/v1/progress/changes`, { headers: key })
    let cursor = ((await start.json()) as { next: string }).next

    // Rounds of enrolls sent at once, asking for all three tiers, whichever the student has.
    const answers: Answer[] = []
    for (let round = 0; round < ROUNDS; round++) {
      await Promise.all(
        Array.from({ length: CLIENTS }, async (_, client) => {
          const requested = TIER_IDS[(client + round) % TIER_IDS.length]!
          const res = await enroll(bases[client % bases.length]!, student, requested)
          const body = await res.text()
          expect(res.status, body).toBe(200)
          const { tier, updatedAt } = JSON.parse(body) as { tier: string; updatedAt: string }
          answers.push({ requested, tier, updatedAt })
          clock.advance(1)
        }),
      )
    }

    const changes: TierChange[] = []
    for (;;) {
      const res = await fetch(`${bases[0]}/api/v1/progress/changes?cursor=${cursor}&limit=100`, { headers: key })
      expect(res.status).toBe(200)
      const page = (await res.json()) as { changes: TierChange[]; next: string; hasMore: boolean }
      changes.push(...page.changes.filter((change) => change.profileId === student))
      cursor = page.next
      if (!page.hasMore) break
    }
    const stored = await storage.db
      .selectFrom('students')
      .select(['tier', 'tier_updated_at'])
      .where('id', '=', student)
      .executeTakeFirstOrThrow()
    const outcomes = await storage.db
      .selectFrom('disclosures')
      .select(['outcome', (eb) => eb.fn.countAll<number>().as('count')])
      .where('student_id', '=', student)
      .where('action', '=', 'enroll')
      .groupBy('outcome')
      .execute()
    const disclosed = Object.fromEntries(outcomes.map((row) => [row.outcome, Number(row.count)]))

    expect(answers).toHaveLength(CLIENTS * ROUNDS)
    const wrong = answers.filter((answer) => answer.tier !== answer.requested)
    expect(wrong, `${wrong.length} of ${answers.length} answers name a tier other than the one asked for`).toEqual([])

    // The feed, replayed from the first tier: every item a change, ending at the stored tier.
    expect(changes.every((change) => change.type === 'tier_changed')).toBe(true)
    const sequences = changes.map((change) => change.sequence)
    expect(new Set(sequences).size, 'no change twice').toBe(sequences.length)
    let tier = 'explorer'
    for (const change of changes) {
      expect(change.tier, `change ${change.sequence} changes the tier`).not.toBe(tier)
      tier = change.tier!
    }
    const last = changes.at(-1)!
    expect({ tier: stored.tier, updatedAt: stored.tier_updated_at }, 'the last change committed is the state').toEqual({
      tier: last.tier,
      updatedAt: last.changedAt,
    })
    // One disclosure per enroll: a change for each item of the feed, and no change for the rest.
    expect(disclosed).toEqual({ updated: changes.length, unchanged: answers.length - changes.length })
    // Each answer's tier and time are those of a change committed (or the student's first tier).
    const committed = new Set(changes.map((change) => `${change.tier} ${change.changedAt}`))
    committed.add(`explorer ${new Date(START).toISOString()}`)
    expect(answers.filter((answer) => !committed.has(`${answer.tier} ${answer.updatedAt}`))).toEqual([])
  })
})
