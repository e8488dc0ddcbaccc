/**
 * GET /api/v1/students: the organisation's students, paged by id, each listed exactly once,
 * even while students are added between pages; only the kind of student the key may see; every
 * student listed recorded in the disclosure log before the answer.
 */
import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import { beforeAll, describe, expect, it } from 'vitest'
import { createSandbox } from '../../src/cases/sandbox.js'
import { createApiKey, createOrganisation } from '../../src/storage/access-repository.js'
import { recordAgreement } from '../../src/cases/agreement-record.js'
import { sandboxStudents } from '../../src/storage/sandbox-repository.js'
import { linkStudents, upsertStudents } from '../../src/storage/student-import-repository.js'
import { TIER_IDS } from '../../src/domain/tiers.js'
import { bearer, buildTestApp, expectRefusals, keysWithoutAccess, linkPastTheGuard, STUDENTS } from '../helper.js'
import { bodyInClear, legacyCursor } from '../support/cursors.js'
import { perSuite } from '../support/built.js'

const DAY = 86_400_000

interface RosterStudent {
  profileId: string
  displayName: string
  tier: string
  updatedAt: string
}

describe('roster', () => {
  const t = perSuite(() => buildTestApp({ env: { RATE_LIMIT: '100000', ORGANISATION_RATE_LIMIT: '100000' } }))
  let read: { authorization: string }
  /** Acme's real students, by id. */
  let acme: string[]

  /** Every page from the first, following `next`; `between` runs after each page. */
  async function walk(
    headers: { authorization: string },
    query: string,
    between: () => Promise<void> = async () => {},
  ): Promise<{ students: RosterStudent[]; pages: number }> {
    const students: RosterStudent[] = []
    let url: string | null = `/api/v1/students?${query}`
    let pages = 0
    while (url !== null) {
      const res = await t.call({ url, headers })
      expect(res.statusCode, res.body).toBe(200)
      const body = res.json() as { students: RosterStudent[]; next: string | null }
      students.push(...body.students)
      pages++
      if (body.next === null) {
        expect(res.headers.link).toBeUndefined()
        url = null
      } else {
        // The Link header and `next` say the same.
        const link = /^<([^>]+)>; rel="next"$/.exec(String(res.headers.link))?.[1]
        expect(new URL(link!, 'http://x').searchParams.get('cursor')).toBe(body.next)
        url = link!
      }
      await between()
    }
    return { students, pages }
  }

  async function addStudents(ids: string[], organisationId = t.fixtures.orgs.acme): Promise<void> {
    await upsertStudents(
      t.storage.db,
      ids.map((id, i) => ({ id, firstName: `Kid${i}`, tier: TIER_IDS[i % 3]! })),
      t.clock.now(),
    )
    await linkStudents(
      t.storage.db,
      ids.map((studentId) => ({ studentId, organisationId })),
      t.clock.now(),
    )
  }

  beforeAll(async () => {
    read = bearer(t.fixtures.keys.read)
    const extra = Array.from({ length: 17 }, () => randomUUID())
    await addStudents(extra)
    acme = [STUDENTS.ada, STUDENTS.ben, STUDENTS.dev, ...extra].sort()
  })

  it('lists the first name, tier and last change of each student, by id', async () => {
    const res = await t.call({ url: '/api/v1/students', headers: read })
    expect(res.statusCode).toBe(200)
    const body = res.json()
    expect(Object.keys(body)).toEqual(['students', 'next'])
    expect(body.next).toBeNull()
    expect(body.students.map((s: RosterStudent) => s.profileId)).toEqual(acme)
    const ada = body.students.find((s: RosterStudent) => s.profileId === STUDENTS.ada)
    // Ada's progress was imported at START, after her tier (ten days earlier).
    expect(ada).toEqual({
      profileId: STUDENTS.ada,
      displayName: 'Ada',
      tier: 'explorer',
      updatedAt: new Date(t.clock.now()).toISOString(),
    })
    const dev = body.students.find((s: RosterStudent) => s.profileId === STUDENTS.dev)
    expect(dev.updatedAt).toBe(new Date(t.clock.now() - 10 * DAY).toISOString())
  })

  it('returns every student exactly once whatever the page size', async () => {
    for (let limit = 1; limit <= acme.length + 1; limit++) {
      const { students, pages } = await walk(read, `limit=${limit}`)
      expect(
        students.map((s) => s.profileId),
        `limit ${limit}`,
      ).toEqual(acme)
      expect(pages, `limit ${limit}`).toBe(Math.max(1, Math.ceil(acme.length / limit)))
    }
  })

  it('skips and repeats no student while students are added between pages', async () => {
    const before = (await walk(read, 'limit=100')).students.map((s) => s.profileId)
    const added: string[] = []
    const { students } = await walk(read, 'limit=3', async () => {
      // Ids on both sides of the cursor: before it (not listed in this pass) and after it.
      const ids = [randomUUID(), randomUUID(), `00000000-0000-4000-8000-${randomUUID().slice(-12)}`]
      added.push(...ids)
      await addStudents(ids)
    })
    const listed = students.map((s) => s.profileId)
    expect(new Set(listed).size, 'no student twice').toBe(listed.length)
    for (const id of before) expect(listed, id).toContain(id)
    expect([...listed].sort()).toEqual(listed)
    for (const id of listed) expect([...before, ...added]).toContain(id)
    acme = (await walk(read, 'limit=500')).students.map((s) => s.profileId)
  })

  it('filters by tier, and pages within the filter', async () => {
    const all = (await walk(read, 'limit=500')).students
    for (const tier of TIER_IDS) {
      const { students } = await walk(read, `tier=${tier}&limit=2`)
      expect(students.length).toBeGreaterThan(0)
      expect(students).toEqual(all.filter((s) => s.tier === tier))
    }
  })

  it("never lists another organisation's students", async () => {
    const beta = (await walk(bearer(t.fixtures.keys.otherOrg), 'limit=500')).students.map((s) => s.profileId)
    expect(beta).toEqual([STUDENTS.ben, STUDENTS.cleo])
    const acmeIds = (await walk(read, 'limit=500')).students.map((s) => s.profileId)
    expect(acmeIds).not.toContain(STUDENTS.cleo)
  })

  it('shows test keys sandbox students only, and live keys real students only', async () => {
    const sandbox = await createSandbox(t.storage.db, 'roster@example.org', t.clock.now())
    const synthetic = (await sandboxStudents(t.storage.db, sandbox.id)).map((s) => s.id).sort()
    const testKey = (
      await createApiKey(
        t.storage.db,
        { organisationId: sandbox.id, name: 'test', scopes: ['students:read'], expiresAt: null, mode: 'test' },
        t.clock.now(),
      )
    ).key
    // A real student linked to the sandbox, and a sandbox student linked to Acme, by mistake.
    await linkPastTheGuard(
      t.storage.db,
      [
        { studentId: STUDENTS.ada, organisationId: sandbox.id },
        { studentId: synthetic[0]!, organisationId: t.fixtures.orgs.acme },
      ],
      t.clock.now(),
    )
    const seen = (await walk(bearer(testKey), 'limit=3')).students.map((s) => s.profileId)
    expect(seen).toEqual(synthetic)
    const live = (await walk(read, 'limit=500')).students.map((s) => s.profileId)
    expect(live).not.toContain(synthetic[0])
    expect(live).toEqual(acme)
  })

  it('refuses keys without the scope or the agreement, like the progress route', async () => {
    const revoked = [t.fixtures.keys.revoked, 'api_key_revoked'] as const
    await expectRefusals(t, '/api/v1/students', [...keysWithoutAccess(t.fixtures), revoked])
    const scope = await t.call({ url: '/api/v1/students', headers: bearer(t.fixtures.keys.catalog) })
    expect(scope.headers['www-authenticate']).toContain('scope="students:read"')
    expect(scope.headers.ratelimit).toBeDefined()
  })

  it('records one disclosure row per student listed, 500 for a page of 500, before answering', async () => {
    const organisation = await createOrganisation(t.storage.db, 'Big District', t.clock.now())
    await recordAgreement(
      t.storage.db,
      { organisationId: organisation.id, signedAt: t.clock.now() - DAY, expiresAt: null, documentRef: 'DSA-big' },
      t.clock.now(),
    )
    const key = (
      await createApiKey(
        t.storage.db,
        { organisationId: organisation.id, name: 'sync', scopes: ['students:read'], expiresAt: null },
        t.clock.now(),
      )
    ).key
    await addStudents(
      Array.from({ length: 501 }, () => randomUUID()),
      organisation.id,
    )
    const res = await t.call({ url: '/api/v1/students?limit=500', headers: bearer(key) })
    expect(res.statusCode).toBe(200)
    const body = res.json()
    expect(body.students).toHaveLength(500)
    expect(body.next).not.toBeNull()
    const rows = await t.storage.db
      .selectFrom('disclosures')
      .select(['student_id', 'action', 'outcome', 'organisation_id'])
      .where('request_id', '=', String(res.headers['x-request-id']))
      .execute()
    expect(rows).toHaveLength(500)
    expect(new Set(rows.map((row) => row.student_id))).toEqual(
      new Set(body.students.map((s: RosterStudent) => s.profileId)),
    )
    expect(new Set(rows.map((row) => `${row.action} ${row.outcome} ${row.organisation_id}`))).toEqual(
      new Set([`students.list disclosed ${organisation.id}`]),
    )
    const last = await t.call({ url: `/api/v1/students?limit=500&cursor=${body.next}`, headers: bearer(key) })
    expect(last.json().students).toHaveLength(1)
    const count = await sql<{ n: number | string }>`select count(*) as n from disclosures where request_id = ${String(
      last.headers['x-request-id'],
    )}`.execute(t.storage.db)
    expect(Number(count.rows[0]!.n)).toBe(1)
  })

  it('answers bad parameters with 400 problem+json naming the parameter', async () => {
    const first = (await t.call({ url: '/api/v1/students?limit=2', headers: read })).json()
    const garbled = `${first.next.slice(0, -2)}${first.next.endsWith('A') ? 'B' : 'A'}`
    const changesCursor = (await t.call({ url: '/api/v1/progress/changes', headers: read })).json().next
    const cases: [string, string, RegExp][] = [
      ['limit=0', 'limit', /must be >= 1/],
      ['limit=501', 'limit', /must be <= 500/],
      ['limit=ten', 'limit', /must be an integer/],
      ['limit=2.5', 'limit', /must be an integer/],
      ['tier=wizard', 'tier', /must be one of: explorer, builder, innovator/],
      ['cursor=', 'cursor', /fewer than 1 character/],
      ['cursor=not-a-cursor', 'cursor', /not a cursor this API gave out.*leave cursor out/],
      [`cursor=${garbled}`, 'cursor', /not a cursor this API gave out/],
      [`cursor=${changesCursor}`, 'cursor', /belongs to the change feed/],
      ['sort=name', 'sort', /unknown query parameter/],
    ]
    for (const [query, field, detail] of cases) {
      const res = await t.call({ url: `/api/v1/students?${query}`, headers: read })
      expect(res.statusCode, query).toBe(400)
      const body = res.json()
      expect(body.code).toBe('invalid_request')
      expect(body.errors, query).toEqual([{ in: 'query', field, detail: expect.stringMatching(detail) }])
    }
  })

  it('names no student in its cursor, which works for its organisation only, and still reads one given out in clear', async () => {
    const first = (await t.call({ url: '/api/v1/students?limit=2', headers: read })).json()
    const last = first.students.at(-1).profileId
    expect(bodyInClear(first.next)).toBeUndefined()
    expect(Buffer.from(first.next, 'base64url').toString('latin1')).not.toContain(last)
    const second = (await t.call({ url: `/api/v1/students?limit=2&cursor=${first.next}`, headers: read })).json()
    expect(second.students[0].profileId > last).toBe(true)
    // Beta's key gets nothing from Acme's cursor, not even a page of its own.
    const beta = await t.call({
      url: `/api/v1/students?cursor=${first.next}`,
      headers: bearer(t.fixtures.keys.otherOrg),
    })
    expect(beta.statusCode).toBe(400)
    expect(beta.json().detail).toMatch(/not a cursor this API gave out to your organisation/)
    // A cursor of the first form, in clear, continues as it did.
    const legacy = await t.call({
      url: `/api/v1/students?limit=2&cursor=${legacyCursor(`students.${last}`)}`,
      headers: read,
    })
    expect(legacy.json().students).toEqual(second.students)
  })

  it('answers other methods with 405', async () => {
    const res = await t.call({ method: 'POST', url: '/api/v1/students', headers: read, payload: {} })
    expect(res.statusCode).toBe(405)
    expect(res.headers.allow).toBe('GET, HEAD')
  })
})
