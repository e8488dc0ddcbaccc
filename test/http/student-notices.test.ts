/**
 * The change feed's notices over HTTP: an unlinked or erased student appears once more in the
 * feed of each organisation concerned, as an item of type, sequence, profileId and changedAt only
 * (checked against the OpenAPI document), never in another organisation's feed, and recorded in
 * the disclosure log like any other item.
 */
import { describe, expect, it } from 'vitest'
import { listDisclosures } from '../../src/storage/disclosure-log.js'
import { eraseStudents } from '../../src/cases/erasure.js'
import { unlinkStudent } from '../../src/cases/unlink.js'
import { bearer, buildTestApp, STUDENTS } from '../helper.js'
import { perSuite } from '../support/built.js'

interface Item {
  sequence: number
  type: string
  profileId: string
  changedAt: string
  displayName?: string
}

describe('notices in the change feed', () => {
  const t = perSuite(() => buildTestApp())

  async function feed(key: string): Promise<Item[]> {
    const res = await t.call({ url: '/api/v1/progress/changes?from=beginning&limit=500', headers: bearer(key) })
    expect(res.statusCode, res.body).toBe(200)
    return res.json().changes
  }

  it('tells the organisation a student left it, with the id only, and no other organisation', async () => {
    t.clock.advance(60_000)
    await unlinkStudent(t.storage.db, STUDENTS.dev, t.fixtures.orgs.acme, t.clock.now())
    const acme = await feed(t.fixtures.keys.read)
    expect(acme.at(-1)).toEqual({
      sequence: acme.at(-1)!.sequence,
      type: 'student_unlinked',
      profileId: STUDENTS.dev,
      changedAt: new Date(t.clock.now()).toISOString(),
    })
    // Dev's own changes are no longer Acme's to read.
    expect(acme.filter((item) => item.profileId === STUDENTS.dev).map((item) => item.type)).toEqual([
      'student_unlinked',
    ])
    expect((await feed(t.fixtures.keys.otherOrg)).filter((item) => item.type.startsWith('student_'))).toEqual([])
    const progress = await t.call({
      url: `/api/v1/students/${STUDENTS.dev}/progress`,
      headers: bearer(t.fixtures.keys.read),
    })
    expect(progress.statusCode).toBe(404)
    const rows = await listDisclosures(t.storage.db, { action: 'progress.changes' })
    expect(
      rows.filter((row) => row.student_id === STUDENTS.dev && row.organisation_id === t.fixtures.orgs.acme),
    ).not.toEqual([])
  })

  it('tells every organisation an erased student was linked to, and serves nothing more of it', async () => {
    t.clock.advance(60_000)
    await eraseStudents(t.storage.db, [STUDENTS.ben], t.clock.now())
    for (const key of [t.fixtures.keys.read, t.fixtures.keys.otherOrg]) {
      const ben = (await feed(key)).filter((item) => item.profileId === STUDENTS.ben)
      expect(ben).toEqual([
        {
          sequence: expect.any(Number),
          type: 'student_deleted',
          profileId: STUDENTS.ben,
          changedAt: new Date(t.clock.now()).toISOString(),
        },
      ])
    }
    const progress = await t.call({
      url: `/api/v1/students/${STUDENTS.ben}/progress`,
      headers: bearer(t.fixtures.keys.read),
    })
    expect(progress.statusCode).toBe(404)
    const roster = await t.call({ url: '/api/v1/students', headers: bearer(t.fixtures.keys.read) })
    expect(roster.json().students.map((s: { profileId: string }) => s.profileId)).not.toContain(STUDENTS.ben)
  })
})
