/**
 * The operator's disclosure log page pages through the log, newest first, filters kept; the
 * district export by school holds the school's students, erased ones too.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { recordDisclosure } from '../../src/storage/disclosure-log.js'
import { eraseStudents } from '../../src/cases/erasure.js'
import { buildTestApp, STUDENTS } from '../helper.js'
import { type DashboardClient, signedInOperator } from './dashboard-client.js'
import { perSuite } from '../support/built.js'

describe('the operator disclosure log page', () => {
  const t = perSuite(() => buildTestApp())
  let operator: DashboardClient
  beforeAll(async () => {
    operator = await signedInOperator(t, '192.0.2.4')
  })

  it('shows 200 records a page with an "Older records" link that keeps the filter, until the last page', async () => {
    const context = { keyId: t.fixtures.keyIds.read, organisationId: t.fixtures.orgs.acme }
    for (let i = 0; i < 450; i++) {
      const student = i % 2 === 0 ? STUDENTS.ada : STUDENTS.ben
      await recordDisclosure(
        t.storage.db,
        { ...context, at: t.clock.now() + i, requestId: `req-${i}` },
        student,
        'progress.read',
        'disclosed',
      )
    }
    const seen: string[] = []
    let url = `/dashboard/operator/disclosures?student=${STUDENTS.ada}`
    for (let page = 0; page < 5; page++) {
      const res = await operator.get(url)
      expect(res.statusCode).toBe(200)
      seen.push(...[...res.body.matchAll(/<code>(req-\d+)<\/code>/g)].map((m) => m[1]!))
      const older = /<a rel="next" href="([^"]+)">Older records<\/a>/.exec(res.body)?.[1]
      if (older === undefined) break
      url = older.replaceAll('&amp;', '&')
      expect(url).toContain(`student=${STUDENTS.ada}`)
    }
    const expected = Array.from({ length: 225 }, (_, k) => `req-${448 - 2 * k}`)
    expect(seen).toEqual(expected)
  })

  it("streams the district export of a school's students, audited, and finds a student by the district's id", async () => {
    const db = t.storage.db
    const school = '44444444-4444-4444-8444-444444444444'
    const at = new Date(t.clock.now()).toISOString()
    await db
      .insertInto('schools')
      .values({ id: school, name: 'Lincoln', external_id: null, identifier: null, created_at: at })
      .execute()
    await db
      .insertInto('student_schools')
      .values({ student_id: STUDENTS.ben, school_id: school, created_at: at })
      .execute()
    await db.updateTable('students').set({ external_id: 'stu-ben' }).where('id', '=', STUDENTS.ben).execute()

    const page = await operator.get('/dashboard/operator/disclosures')
    expect(page.body).toContain(`<option value="${school}">Lincoln</option>`)
    const filtered = await operator.get(`/dashboard/operator/disclosures?school=${school}`)
    expect(filtered.body).not.toContain(STUDENTS.ada)
    expect(filtered.body).toContain(`href="/dashboard/operator/disclosures/export.csv?school=${school}"`)

    const before = (await db.selectFrom('audit_log').select('id').where('action', '=', 'disclosures.export').execute())
      .length
    const csv = await operator.get(`/dashboard/operator/disclosures/export.csv?school=${school}`)
    expect(csv.statusCode).toBe(200)
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8')
    const lines = csv.body.trim().split('\r\n')
    expect(lines).toHaveLength(226)
    expect(lines.slice(1).every((line) => line.includes(`"${STUDENTS.ben}","stu-ben"`))).toBe(true)
    const json = JSON.parse((await operator.get(`/dashboard/operator/disclosures/export.json?school=${school}`)).body)
    expect(json.range.school).toEqual({ id: school, name: 'Lincoln' })
    expect(json.rows).toBe(225)
    const audits = await db
      .selectFrom('audit_log')
      .select('detail')
      .where('action', '=', 'disclosures.export')
      .execute()
    expect(audits).toHaveLength(before + 2)
    expect(JSON.parse(audits.at(-1)!.detail).filter).toEqual({ schoolId: school })

    const unknown = await operator.get('/dashboard/operator/disclosures/export.csv?school=nonsense')
    expect(unknown.statusCode).toBe(400)

    const found = await operator.get('/dashboard/operator/students?id=stu-ben')
    expect(found.body).toContain(`Erase student <code>${STUDENTS.ben}</code>?`)
    expect(found.body).toContain('District id <code>stu-ben</code>')
  })

  it('keeps an erased student of the school in the log page and the district export by school', async () => {
    const school = '44444444-4444-4444-8444-444444444444'
    await eraseStudents(t.storage.db, [STUDENTS.ben], t.clock.now())
    const filtered = await operator.get(`/dashboard/operator/disclosures?school=${school}`)
    expect(filtered.body).toContain(STUDENTS.ben)
    const csv = await operator.get(`/dashboard/operator/disclosures/export.csv?school=${school}`)
    const lines = csv.body.trim().split('\r\n')
    expect(lines).toHaveLength(226)
    // By our id only: the district's id went with the name.
    expect(lines.slice(1).every((line) => line.includes(`"${STUDENTS.ben}",""`))).toBe(true)
  })
})
