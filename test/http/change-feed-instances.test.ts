/**
 * The change feed's promise under real concurrency on PostgreSQL: three app instances on one
 * database, each with its own connection pool, commit enrolls in parallel while a reader follows
 * the feed through all three. The reader must get every change exactly once and in order.
 *
 * This is what numbering changes from a PostgreSQL sequence gets wrong: numbers are handed out
 * before commit, a transaction holding a lower number commits after a reader has moved past a
 * higher one, and that change is never delivered (storage/student-change-log.ts). With the
 * numbers drawn from a sequence instead of the counter row, this test failed in every one of six
 * runs, the reader missing 5 to 11 of the 270 changes.
 *
 * A trigger the test adds pauses each transaction between numbering its change and committing,
 * so that commits overlap as they do under real load on a slower network or disk.
 *
 * SQLite is not run here: its single writer commits one transaction at a time, and instances in
 * one process would wait for one another's lock on the event loop they share.
 */
import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ManualClock } from '../../src/clock.js'
import { TIER_IDS } from '../../src/domain/tiers.js'
import { openStorage, type Storage } from '../../src/storage/connection.js'
import { lastChangeSequence } from '../../src/storage/student-change-log.js'
import { linkStudents, upsertStudents } from '../../src/storage/student-import-repository.js'
import {
  bearer,
  createTestStorage,
  type Fixtures,
  freshDatabaseUrl,
  type ListeningApp,
  listeningApp,
  START,
  seedFixtures,
  testConfig,
} from '../helper.js'
import { perSuite } from '../support/built.js'

const INSTANCES = 3
/** Concurrent enroll loops per instance, each on a student of its own; fewer than the pool has connections, so the reader is never queued behind them. */
const LANES = 6
const ENROLLS_PER_LANE = 15

interface Change {
  sequence: number
  profileId: string
  tier?: string
}

describe.skipIf(process.env.TEST_DATABASE_URL === undefined)('the change feed with three instances writing', () => {
  const clock = new ManualClock(START)
  const url = freshDatabaseUrl()
  const storage = perSuite(() => createTestStorage({ url }))
  const others: Storage[] = []
  const apps: ListeningApp[] = []
  let fixtures: Fixtures
  const students = Array.from({ length: INSTANCES * LANES }, () => randomUUID())

  beforeAll(async () => {
    fixtures = await seedFixtures(storage, clock.now())
    await upsertStudents(
      storage.db,
      students.map((id) => ({ id, firstName: 'Sam', tier: 'explorer' as const })),
      clock.now(),
    )
    await linkStudents(
      storage.db,
      students.map((studentId) => ({ studentId, organisationId: fixtures.orgs.acme })),
      clock.now(),
    )
    // A pause after a change is numbered and before its transaction commits, as a slow network
    // or disk would make: up to 4 ms, and 30 ms for one student's changes. Commits then come in
    // any order, unless numbering orders them; a reader that reads while a slow change is
    // pending and a later-numbered one is committed is where a sequence loses a change.
    await sql`create function pause_before_commit() returns trigger language plpgsql as $$
      begin
        perform pg_sleep(case when new.student_id = ${sql.lit(students[0]!)} then 0.03 else random() * 0.004 end);
        return null;
      end $$`.execute(storage.db)
    await sql`create trigger pause_after_change after insert on student_changes
      for each row execute function pause_before_commit()`.execute(storage.db)
    for (let i = 1; i < INSTANCES; i++) others.push(openStorage(url))
    const config = testConfig({ RATE_LIMIT: '1000000', ORGANISATION_RATE_LIMIT: '1000000' })
    for (const each of [storage, ...others])
      apps.push(await listeningApp({ config, storage: each, clock, logger: false, pollChanges: false }))
  })

  afterAll(async () => {
    for (const app of apps) await app.close()
    for (const each of others) await each.close()
  })

  it('gives a reader every change exactly once, in commit order, while the instances commit in parallel', async () => {
    const key = bearer(fixtures.keys.readWrite)
    const startSequence = await lastChangeSequence(storage.db)
    let cursor = (await apps[0]!.client.request({ url: '/api/v1/progress/changes', headers: key })).json()
      .next as string

    let writing = true
    const writers = apps.map((app, instance) =>
      Promise.all(
        Array.from({ length: LANES }, async (_, lane) => {
          const id = students[instance * LANES + lane]!
          for (let i = 1; i <= ENROLLS_PER_LANE; i++) {
            const res = await app.client.request({
              method: 'POST',
              url: `/api/v1/students/${id}/enroll`,
              headers: key,
              payload: { tier: TIER_IDS[i % TIER_IDS.length] },
            })
            expect(res.statusCode, res.body).toBe(200)
          }
        }),
      ),
    )

    const received: Change[] = []
    let reads = 0
    let duringWrites = 0
    const reader = (async () => {
      for (;;) {
        // Writers done before this read began: it sees every change, and then the reader stops.
        const last = !writing
        const app = apps[reads++ % INSTANCES]!
        const res = await app.client.request({
          url: `/api/v1/progress/changes?cursor=${cursor}&limit=100`,
          headers: key,
        })
        expect(res.statusCode, res.body).toBe(200)
        const body = res.json() as { changes: Change[]; next: string; hasMore: boolean }
        received.push(...body.changes)
        cursor = body.next
        if (!last) duringWrites++
        if (last && !body.hasMore) return
      }
    })()
    await Promise.all(writers)
    writing = false
    await reader

    const committed = await storage.db
      .selectFrom('student_changes')
      .select(['seq', 'student_id', 'tier'])
      .where('seq', '>', startSequence)
      .orderBy('seq')
      .execute()
    // Every enroll changed the tier: one change each.
    expect(committed).toHaveLength(INSTANCES * LANES * ENROLLS_PER_LANE)
    const sequences = received.map((change) => change.sequence)
    expect(new Set(sequences).size, 'no change twice').toBe(sequences.length)
    expect(
      received.map((change) => [change.sequence, change.profileId, change.tier]),
      'every committed change, in order',
    ).toEqual(committed.map((row) => [Number(row.seq), row.student_id, row.tier]))
    // The reader really did follow the feed while the writers wrote.
    expect(duringWrites).toBeGreaterThan(10)
    // And each student's last change is its tier now.
    for (const id of students) {
      const last = received.filter((change) => change.profileId === id).at(-1)
      expect(last?.tier).toBe(TIER_IDS[ENROLLS_PER_LANE % TIER_IDS.length])
    }
  })
})
