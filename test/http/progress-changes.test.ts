/**
 * GET /api/v1/progress/changes: every tier and progress change of the organisation's students,
 * in commit order, each exactly once across pages and restarts; only the students the key may
 * see; each student of a response recorded in the disclosure log.
 */
import { randomUUID } from 'node:crypto'
import { beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { ManualClock } from '../../src/clock.js'
import { TIER_IDS, type TierId } from '../../src/domain/tiers.js'
import { createSandbox } from '../../src/cases/sandbox.js'
import { Cursors } from '../../src/http/cursors.js'
import { createApiKey } from '../../src/storage/access-repository.js'
import { openStorage } from '../../src/storage/connection.js'
import { sandboxStudents } from '../../src/storage/sandbox-repository.js'
import { sharedSecret } from '../../src/cases/shared-settings.js'
import { lastChangeSequence } from '../../src/storage/student-change-log.js'
import { upsertProgress, upsertStudents } from '../../src/storage/student-import-repository.js'
import {
  addLinkedStudents,
  bearer,
  buildTestApp,
  createTestStorage,
  expectRefusals,
  freshDatabaseUrl,
  keysWithoutAccess,
  linkPastTheGuard,
  listeningApp,
  seedFixtures,
  START,
  testConfig,
  STUDENTS,
} from '../helper.js'
import { bodyInClear, legacyCursor } from '../support/cursors.js'
import { perSuite } from '../support/built.js'

interface Change {
  sequence: number
  type: 'tier_changed' | 'progress_updated'
  profileId: string
  displayName: string
  changedAt: string
  tier?: string
  progress?: { lessonSlug: string; status: string; xp: number }
}

interface Feed {
  changes: Change[]
  next: string
  hasMore: boolean
}

const FEED = '/api/v1/progress/changes'

describe('progress change feed', () => {
  const t = perSuite(() => buildTestApp({ env: { RATE_LIMIT: '100000', ORGANISATION_RATE_LIMIT: '100000' } }))
  let read: { authorization: string }
  let write: { authorization: string }

  async function feed(query: string, headers = read): Promise<Feed> {
    const res = await t.call({ url: `${FEED}?${query}`, headers })
    expect(res.statusCode, res.body).toBe(200)
    return res.json()
  }

  /** Every change after `cursor` (or from the beginning), following `next` while `hasMore`. */
  async function follow(start: string, limit: number, headers = read): Promise<{ changes: Change[]; next: string }> {
    const changes: Change[] = []
    let body = await feed(`${start}&limit=${limit}`, headers)
    changes.push(...body.changes)
    while (body.hasMore) {
      body = await feed(`cursor=${body.next}&limit=${limit}`, headers)
      changes.push(...body.changes)
    }
    return { changes, next: body.next }
  }

  const enroll = (id: string, tier: string, headers = write) =>
    t.call({ method: 'POST', url: `/api/v1/students/${id}/enroll`, headers, payload: { tier } })

  /** A tier the student is not in now (earlier tests move students around). */
  async function otherTier(id: string, skip = 1): Promise<TierId> {
    const { tier } = await t.storage.db
      .selectFrom('students')
      .select('tier')
      .where('id', '=', id)
      .executeTakeFirstOrThrow()
    return TIER_IDS[(TIER_IDS.indexOf(tier) + skip) % TIER_IDS.length]!
  }

  beforeAll(async () => {
    read = bearer(t.fixtures.keys.read)
    write = bearer(t.fixtures.keys.write)
  })
  beforeEach(() => t.clock.advance(1000))

  it("starts from the beginning with from=beginning: the fixtures' tiers, then their progress", async () => {
    const { changes } = await follow('from=beginning', 100)
    // Acme's students: Ada, Ben, Dev (Cleo is Beta's only); Ada has four entries, Ben one.
    expect(changes.map((c) => [c.type, c.displayName])).toEqual([
      ['tier_changed', 'Ada'],
      ['tier_changed', 'Ben'],
      ['tier_changed', 'Dev'],
      ['progress_updated', 'Ada'],
      ['progress_updated', 'Ada'],
      ['progress_updated', 'Ada'],
      ['progress_updated', 'Ada'],
      ['progress_updated', 'Ben'],
    ])
    expect(changes[0]).toEqual({
      sequence: expect.any(Number),
      type: 'tier_changed',
      profileId: STUDENTS.ada,
      displayName: 'Ada',
      changedAt: '2026-02-20T09:00:00.000Z',
      tier: 'explorer',
    })
    const ben = changes.at(-1)!
    expect(ben).toEqual({
      sequence: expect.any(Number),
      type: 'progress_updated',
      profileId: STUDENTS.ben,
      displayName: 'Ben',
      changedAt: '2026-03-02T09:00:00.000Z',
      progress: {
        lessonSlug: 'builder/b2-loops-save-time',
        status: 'completed',
        xp: 80,
        timeSeconds: 700,
        startedAt: '2026-02-24T09:00:00.000Z',
        completedAt: '2026-02-25T09:00:00.000Z',
      },
    })
    const sequences = changes.map((c) => c.sequence)
    expect([...sequences].sort((a, b) => a - b)).toEqual(sequences)
  })

  it('starts from now without a cursor: no changes, then each later change once', async () => {
    const now = await feed('')
    expect(now.changes).toEqual([])
    expect(now.hasMore).toBe(false)
    const explicit = await feed('from=now')
    expect([explicit.changes, explicit.hasMore]).toEqual([[], false])
    const first = await enroll(STUDENTS.dev, 'builder')
    expect(first.statusCode).toBe(200)
    // Setting the same tier again changes nothing, so it is no change.
    expect((await enroll(STUDENTS.dev, 'builder')).statusCode).toBe(200)
    const after = await feed(`cursor=${now.next}`)
    expect(after.changes).toEqual([
      {
        sequence: expect.any(Number),
        type: 'tier_changed',
        profileId: STUDENTS.dev,
        displayName: 'Dev',
        changedAt: first.json().updatedAt,
        tier: 'builder',
      },
    ])
    expect(after.hasMore).toBe(false)
    expect((await feed(`cursor=${after.next}`)).changes).toEqual([])
    // The roster's updatedAt is the time of that change.
    const roster = (await t.call({ url: '/api/v1/students', headers: read })).json()
    expect(roster.students.find((s: { profileId: string }) => s.profileId === STUDENTS.dev).updatedAt).toBe(
      first.json().updatedAt,
    )
  })

  it('gives every change exactly once, in order, whatever the page size', async () => {
    const start = (await feed('')).next
    const tiers = ['innovator', 'explorer', 'builder']
    for (let round = 0; round < 4; round++) {
      for (const id of [STUDENTS.ada, STUDENTS.ben, STUDENTS.dev]) await enroll(id, tiers[(round + id.length) % 3]!)
      t.clock.advance(10)
    }
    const all = (await follow(`cursor=${start}`, 500)).changes
    expect(all.length).toBeGreaterThanOrEqual(8)
    for (let limit = 1; limit <= all.length + 1; limit++) {
      const paged = await follow(`cursor=${start}`, limit)
      expect(paged.changes, `limit ${limit}`).toEqual(all)
    }
    const sequences = all.map((c) => c.sequence)
    expect(new Set(sequences).size).toBe(sequences.length)
    expect([...sequences].sort((a, b) => a - b)).toEqual(sequences)
  })

  it('carries imported progress and tiers, and nothing for rows imported again unchanged', async () => {
    const start = (await feed('')).next
    const entry = {
      studentId: STUDENTS.dev,
      lessonSlug: 'explorer/e1-robots-follow-instructions',
      status: 'in_progress' as const,
      xp: 5,
      timeSeconds: 60,
      startedAt: '2026-03-01T10:00:00.000Z',
      completedAt: null,
    }
    await upsertProgress(t.storage.db, [entry], t.clock.now())
    await upsertProgress(t.storage.db, [entry], t.clock.now())
    const done = { ...entry, status: 'completed' as const, xp: 50, completedAt: '2026-03-01T10:30:00.000Z' }
    await upsertProgress(t.storage.db, [done], t.clock.now())
    const tier = await otherTier(STUDENTS.dev)
    await upsertStudents(t.storage.db, [{ id: STUDENTS.dev, firstName: 'Dev', tier }], t.clock.now())
    await upsertStudents(t.storage.db, [{ id: STUDENTS.dev, firstName: 'Dev', tier }], t.clock.now() + 1)
    const { changes } = await follow(`cursor=${start}`, 100)
    expect(changes.map((c) => [c.type, c.progress?.status ?? c.tier])).toEqual([
      ['progress_updated', 'in_progress'],
      ['progress_updated', 'completed'],
      ['tier_changed', tier],
    ])
    expect(changes[1]!.progress).toMatchObject({ xp: 50, completedAt: '2026-03-01T10:30:00.000Z' })
  })

  it('logs an import and enrolls of the same students at once, in one consistent order', async () => {
    // Three statements' worth of students: the import holds the first ones' rows while it
    // writes the last ones, which the enrolls are changing meanwhile.
    const ids = Array.from({ length: 1200 }, () => randomUUID())
    await addLinkedStudents(t.storage.db, ids, t.fixtures.orgs.acme, 'Pat', t.clock.now())
    const start = (await feed('')).next
    const enrolled = ids.slice(-40)
    const [, ...enrolls] = await Promise.all([
      upsertStudents(
        t.storage.db,
        ids.map((id) => ({ id, firstName: 'Pat', tier: 'builder' as const })),
        t.clock.now(),
      ),
      ...enrolled.map((id) => enroll(id, 'innovator')),
    ])
    for (const res of enrolls) expect(res.statusCode, res.body).toBe(200)
    const { changes } = await follow(`cursor=${start}`, 500)
    const last = new Map(changes.map((change) => [change.profileId, change.tier]))
    const stored = await t.storage.db.selectFrom('students').select(['id', 'tier']).where('id', 'in', ids).execute()
    // The last change the feed gives for each student is the tier the student has.
    for (const row of stored) expect(last.get(row.id), row.id).toBe(row.tier)
  })

  it('records one disclosure row per student of a response, before answering', async () => {
    const start = (await feed('')).next
    await enroll(STUDENTS.ada, await otherTier(STUDENTS.ada, 1))
    await enroll(STUDENTS.ada, await otherTier(STUDENTS.ada, 1))
    await enroll(STUDENTS.ben, await otherTier(STUDENTS.ben, 1))
    const res = await t.call({ url: `${FEED}?cursor=${start}`, headers: read })
    expect(res.json().changes).toHaveLength(3)
    const rows = await t.storage.db
      .selectFrom('disclosures')
      .select(['student_id', 'action', 'outcome', 'key_id'])
      .where('request_id', '=', String(res.headers['x-request-id']))
      .orderBy('student_id')
      .execute()
    expect(rows).toEqual([
      { student_id: STUDENTS.ada, action: 'progress.changes', outcome: 'disclosed', key_id: t.fixtures.keyIds.read },
      { student_id: STUDENTS.ben, action: 'progress.changes', outcome: 'disclosed', key_id: t.fixtures.keyIds.read },
    ])
    // A response without changes discloses nothing.
    const empty = await t.call({ url: `${FEED}?cursor=${res.json().next}`, headers: read })
    const none = await t.storage.db
      .selectFrom('disclosures')
      .select('id')
      .where('request_id', '=', String(empty.headers['x-request-id']))
      .execute()
    expect(none).toEqual([])
  })

  it("shows only the organisation's students, sandbox ones to test keys and real ones to live keys", async () => {
    const sandbox = await createSandbox(t.storage.db, 'feed@example.org', t.clock.now())
    const synthetic = (await sandboxStudents(t.storage.db, sandbox.id)).map((s) => s.id)
    const testKey = bearer(
      (
        await createApiKey(
          t.storage.db,
          { organisationId: sandbox.id, name: 'test', scopes: ['students:read'], expiresAt: null, mode: 'test' },
          t.clock.now(),
        )
      ).key,
    )
    // A real student linked to the sandbox, and a sandbox student linked to Acme, by mistake.
    await linkPastTheGuard(
      t.storage.db,
      [
        { studentId: STUDENTS.ada, organisationId: sandbox.id },
        { studentId: synthetic[0]!, organisationId: t.fixtures.orgs.acme },
      ],
      t.clock.now(),
    )
    const sandboxFeed = (await follow('from=beginning', 500, testKey)).changes
    expect(new Set(sandboxFeed.map((c) => c.profileId))).toEqual(new Set(synthetic))
    expect(sandboxFeed.filter((c) => c.type === 'tier_changed')).toHaveLength(synthetic.length)
    expect(sandboxFeed.some((c) => c.type === 'progress_updated')).toBe(true)
    const acmeFeed = new Set((await follow('from=beginning', 500)).changes.map((c) => c.profileId))
    for (const id of [STUDENTS.ada, STUDENTS.ben, STUDENTS.dev]) expect(acmeFeed).toContain(id)
    for (const id of [STUDENTS.cleo, ...synthetic]) expect(acmeFeed).not.toContain(id)
    const betaFeed = (await follow('from=beginning', 500, bearer(t.fixtures.keys.otherOrg))).changes
    expect(new Set(betaFeed.map((c) => c.profileId))).toEqual(new Set([STUDENTS.ben, STUDENTS.cleo]))
  })

  it('refuses keys without the scope or the agreement, like the progress route', async () => {
    await expectRefusals(t, FEED, [...keysWithoutAccess(t.fixtures), [t.fixtures.keys.expired, 'api_key_expired']])
  })

  it('answers bad parameters with 400 problem+json naming the parameter', async () => {
    const next = (await feed('')).next
    const rosterCursor = (await t.call({ url: '/api/v1/students?limit=1', headers: read })).json().next
    // Only a database restored from a backup makes such a cursor: sealed with the service's key.
    const ahead = new Cursors(await sharedSecret(t.storage.db, 'api-cursors')).encode(
      'changes',
      t.fixtures.orgs.acme,
      String((await lastChangeSequence(t.storage.db)) + 1000),
    )
    const cases: [string, string, RegExp][] = [
      ['limit=0', 'limit', /must be >= 1/],
      ['limit=501', 'limit', /must be <= 500/],
      ['from=yesterday', 'from', /must be one of: now, beginning/],
      [`cursor=${next}&from=beginning`, 'from', /either cursor .* or from/],
      [`cursor=${next.slice(0, -3)}`, 'cursor', /not a cursor this API gave out.*from=beginning/],
      [`cursor=${rosterCursor}`, 'cursor', /belongs to the student list/],
      [`cursor=${ahead}`, 'cursor', /ahead of every change recorded/],
      ['since=2026-01-01', 'since', /unknown query parameter/],
    ]
    for (const [query, field, detail] of cases) {
      const res = await t.call({ url: `${FEED}?${query}`, headers: read })
      expect(res.statusCode, query).toBe(400)
      expect(res.json().errors, query).toEqual([{ in: 'query', field, detail: expect.stringMatching(detail) }])
    }
  })

  it("shows in a cursor neither the feed's position nor how much other organisations wrote", async () => {
    const before = (await feed('')).next
    // Another organisation's writes: 250 new students, one change each.
    await upsertStudents(
      t.storage.db,
      Array.from({ length: 250 }, () => ({ id: randomUUID(), firstName: 'Zed', tier: 'explorer' as const })),
      t.clock.now(),
    )
    const after = (await feed('')).next
    const again = (await feed('')).next
    // In clear, the two told the 250 apart; sealed, neither shows a position.
    expect([bodyInClear(before), bodyInClear(after)]).toEqual([undefined, undefined])
    const head = String(await lastChangeSequence(t.storage.db))
    for (const cursor of [before, after, again]) {
      expect(Buffer.from(cursor, 'base64url').toString('latin1')).not.toContain(head)
      expect(cursor).toHaveLength(before.length)
    }
    // The same position twice gives two cursors: equal ones would tell that nobody wrote meanwhile.
    expect(again).not.toBe(after)
    // Each still continues where it was taken: none of the 250 is Acme's.
    expect((await feed(`cursor=${before}`)).changes).toEqual([])
  })

  it('still reads cursors given out in clear, and a feed one past the last change when sealing began from that change', async () => {
    const ceiling = Number(
      (
        await t.storage.db
          .selectFrom('settings')
          .select('value')
          .where('name', '=', 'legacy-feed-cursor-ceiling')
          .executeTakeFirstOrThrow()
      ).value,
    )
    expect(ceiling).toBeGreaterThan(0)
    // A cursor of the first form continues as it always did.
    const fromStart = await follow(`cursor=${legacyCursor('changes.0')}`, 500)
    expect(fromStart.changes).toEqual((await follow('from=beginning', 500)).changes)
    await enroll(STUDENTS.ada, await otherTier(STUDENTS.ada))
    // One beyond the ceiling (forged, or from an instance of the earlier version during an
    // upgrade) reads from the ceiling: changes may come twice, none is missed, and the answer is
    // the same whether or not the position is past the last change, so it cannot probe the feed.
    const atCeiling = await follow(`cursor=${legacyCursor(`changes.${ceiling}`)}`, 500)
    expect(atCeiling.changes.at(-1)).toMatchObject({ profileId: STUDENTS.ada, type: 'tier_changed' })
    const head = await lastChangeSequence(t.storage.db)
    for (const position of [ceiling + 1, head, head + 1, head + 1_000_000]) {
      const { changes } = await follow(`cursor=${legacyCursor(`changes.${position}`)}`, 500)
      expect(changes, String(position)).toEqual(atCeiling.changes)
    }
    // A cursor in clear for the roster continues after its student.
    const [first, ...rest] = (await t.call({ url: '/api/v1/students?limit=500', headers: read })).json().students
    const page = await t.call({
      url: `/api/v1/students?limit=499&cursor=${legacyCursor(`students.${first.profileId}`)}`,
      headers: read,
    })
    expect(page.json().students).toEqual(rest)
  })

  it('refuses a cursor cut short, changed in any byte, or sent by another organisation, with 400', async () => {
    const cursor = (await feed('')).next
    const raw = Buffer.from(cursor, 'base64url')
    const tampered: string[] = []
    for (let i = 0; i < raw.length; i++) {
      const flipped = Buffer.from(raw)
      flipped[i]! ^= 1 << (i % 8)
      tampered.push(flipped.toString('base64url'))
    }
    for (let length = 1; length < cursor.length; length += 3) tampered.push(cursor.slice(0, length))
    tampered.push(`${cursor}A`, `${cursor}AAAA`)
    for (const text of tampered) {
      const res = await t.call({ url: `${FEED}?cursor=${text}`, headers: read })
      expect(res.statusCode, text).toBe(400)
      expect(res.json().errors, text).toEqual([
        { in: 'query', field: 'cursor', detail: expect.stringMatching(/not a cursor this API gave out/) },
      ])
    }
    // Acme's cursors are no use to Beta, and the reverse.
    const beta = bearer(t.fixtures.keys.otherOrg)
    const betaCursor = (await feed('', beta)).next
    const rosterCursor = (await t.call({ url: '/api/v1/students?limit=1', headers: read })).json().next
    for (const [url, headers] of [
      [`${FEED}?cursor=${cursor}`, beta],
      [`${FEED}?cursor=${betaCursor}`, read],
      [`/api/v1/students?cursor=${rosterCursor}`, beta],
    ] as const) {
      const res = await t.call({ url, headers })
      expect(res.statusCode, url).toBe(400)
      expect(res.json().detail, url).toMatch(/not a cursor this API gave out to your organisation/)
    }
  })

  it('keeps a cursor valid across a restart: a new app on the same database continues where it was', async () => {
    const url = freshDatabaseUrl()
    const clock = new ManualClock(START)
    const storage = await createTestStorage({ url })
    const fixtures = await seedFixtures(storage, clock.now())
    const options = { config: testConfig(), clock, logger: false as const, pollChanges: false }
    const key = bearer(fixtures.keys.readWrite)
    const before = await listeningApp({ ...options, storage })
    const cursor = (await before.client.request({ url: FEED, headers: key })).json().next
    for (const tier of ['innovator', 'builder'])
      await before.client.request({
        method: 'POST',
        url: `/api/v1/students/${STUDENTS.ben}/enroll`,
        headers: key,
        payload: { tier },
      })
    await before.close()
    // Another connection and an app that never saw the cursor.
    const reopened = openStorage(url)
    const after = await listeningApp({ ...options, storage: reopened })
    try {
      const res = await after.client.request({ url: `${FEED}?cursor=${cursor}`, headers: key })
      expect(res.json().changes.map((c: Change) => [c.profileId, c.tier])).toEqual([
        [STUDENTS.ben, 'innovator'],
        [STUDENTS.ben, 'builder'],
      ])
    } finally {
      await after.close()
      await reopened.close()
      await storage.close()
    }
  })
})
