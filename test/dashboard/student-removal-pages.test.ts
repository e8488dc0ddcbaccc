/**
 * The operator's student pages: an organisation's linked students (ids only) and unlinking one
 * after a confirmation page; erasing a student found by id, confirmed by typing the id; each
 * change audited under the operator's account; sandbox students refused; and nothing the server
 * logs while erasing names the child.
 */
import { Writable } from 'node:stream'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { ManualClock } from '../../src/clock.js'
import type { TypedApp } from '../../src/http/app-types.js'
import { createSandbox } from '../../src/cases/sandbox.js'
import type { Storage } from '../../src/storage/connection.js'
import { sandboxStudents } from '../../src/storage/sandbox-repository.js'
import { pageStudentChanges } from '../../src/storage/student-change-log.js'
import { linkStudents, upsertStudents } from '../../src/storage/student-import-repository.js'
import { createTestStorage, type Fixtures, START, STUDENTS, seedFixtures, testConfig } from '../helper.js'
import { columnsHolding } from '../support/database-scan.js'
import { createOperatorWithAuthenticator, DashboardClient, OPERATOR } from './dashboard-client.js'

const MARKED = '55555555-5555-4555-8555-555555555555'
const NAME = 'Vespertilmarker'

describe("the operator's student pages", () => {
  let storage: Storage
  let app: TypedApp
  let fixtures: Fixtures
  let operator: DashboardClient
  let sandboxStudent: string
  const clock = new ManualClock(START)
  const logged: string[] = []

  beforeAll(async () => {
    storage = await createTestStorage()
    fixtures = await seedFixtures(storage, START)
    await upsertStudents(storage.db, [{ id: MARKED, firstName: NAME, tier: 'builder' }], START)
    await linkStudents(
      storage.db,
      [fixtures.orgs.acme, fixtures.orgs.beta].map((organisationId) => ({ studentId: MARKED, organisationId })),
      START,
    )
    const sandbox = await createSandbox(storage.db, 'pages@example.org', START)
    sandboxStudent = (await sandboxStudents(storage.db, sandbox.id))[0]!.id
    const stream = new Writable({
      write(chunk, _encoding, done) {
        logged.push(String(chunk))
        done()
      },
    })
    // Everything the server logs, access log included.
    const logger = pino({ level: 'trace' }, stream)
    app = await buildApp({ config: testConfig(), storage, clock, logger, pollChanges: false })
    await app.ready()
    operator = new DashboardClient(app, '192.0.2.40')
    operator.authenticator = await createOperatorWithAuthenticator(storage.db, clock)
    expect((await operator.signIn(OPERATOR.email, OPERATOR.password)).statusCode).toBe(303)
  })
  afterAll(async () => {
    await app?.close()
    await storage?.close()
  })

  const audit = (action: string) =>
    storage.db.selectFrom('audit_log').selectAll().where('action', '=', action).orderBy('id').execute()
  const linked = async (studentId: string) =>
    (
      await storage.db
        .selectFrom('student_organisations')
        .select('organisation_id')
        .where('student_id', '=', studentId)
        .execute()
    ).map((row) => row.organisation_id)

  it("lists an organisation's students by id, without names, and unlinks one after asking", async () => {
    const base = `/dashboard/operator/organisations/${fixtures.orgs.acme}`
    expect((await operator.get(base)).body).toContain(`href="${base}/students"`)
    const list = await operator.get(`${base}/students`)
    expect(list.statusCode).toBe(200)
    for (const id of [STUDENTS.ada, STUDENTS.ben, STUDENTS.dev, MARKED]) expect(list.body).toContain(id)
    expect(list.body).not.toContain(STUDENTS.cleo)
    for (const name of ['Ada', 'Ben', NAME]) expect(list.body).not.toContain(`>${name}<`)

    const confirm = await operator.get(`${base}/students/${STUDENTS.dev}/unlink`)
    expect(confirm.statusCode).toBe(200)
    expect(confirm.body).toContain(`action="${base}/students/${STUDENTS.dev}/unlink"`)
    expect(confirm.body).toMatch(/student_unlinked/)
    // The confirmation changes nothing.
    expect(await linked(STUDENTS.dev)).toEqual([fixtures.orgs.acme])

    const done = await operator.post(`${base}/students/${STUDENTS.dev}/unlink`)
    expect(done.statusCode).toBe(303)
    expect(done.headers.location).toBe(`${base}/students?unlinked=${STUDENTS.dev}`)
    expect((await operator.follow(done)).body).toContain(`Student <code>${STUDENTS.dev}</code> was unlinked`)
    expect(await linked(STUDENTS.dev)).toEqual([])
    const page = (await pageStudentChanges(storage.db, { organisationId: fixtures.orgs.acme, sandbox: false }, 0, 500))!
    expect(page.changes.at(-1)).toMatchObject({ type: 'student_unlinked', studentId: STUDENTS.dev })
    const [row] = await audit('links.remove')
    expect(row).toMatchObject({ actor: `account:${OPERATOR.email}`, target: `student:${STUDENTS.dev}` })
    expect(JSON.parse(row!.detail)).toMatchObject({ organisationId: fixtures.orgs.acme, unlinked: true })

    // No longer linked: no confirmation page to open.
    expect((await operator.get(`${base}/students/${STUDENTS.dev}/unlink`)).statusCode).toBe(404)
  })

  it('erases a student only once its id is typed, audits it, and logs nothing that names the child', async () => {
    const found = await operator.get(`/dashboard/operator/students?id=${MARKED.toUpperCase()}`)
    expect(found.statusCode).toBe(200)
    expect(found.body).toMatch(/Linked to <strong>Acme Learning<\/strong>, <strong>Beta Tutors<\/strong>; 0 progress/)
    expect(found.body).not.toContain(NAME)

    // Without the form's CSRF token, or with another's: refused, nothing erased.
    for (const token of [null, 'forged']) {
      const forged = await operator.post('/dashboard/operator/students/erase', {
        _csrf: token,
        id: MARKED,
        confirm: MARKED,
      })
      expect(forged.statusCode).toBe(403)
    }
    const wrong = await operator.post('/dashboard/operator/students/erase', { id: MARKED, confirm: STUDENTS.ada })
    expect(wrong.statusCode).toBe(400)
    expect(wrong.body).toContain('Type the student id exactly as shown')
    expect(await linked(MARKED)).toHaveLength(2)
    expect(await audit('students.erase')).toEqual([])

    logged.length = 0
    const erased = await operator.post('/dashboard/operator/students/erase', { id: MARKED, confirm: ` ${MARKED} ` })
    expect(erased.statusCode).toBe(303)
    expect(erased.headers.location).toBe(`/dashboard/operator/students?erased=${MARKED}`)
    expect((await operator.follow(erased)).body).toContain(`Student <code>${MARKED}</code> was erased`)
    expect(await storage.db.selectFrom('students').select('id').where('id', '=', MARKED).execute()).toEqual([])
    const [row] = await audit('students.erase')
    expect(row).toMatchObject({ actor: `account:${OPERATOR.email}`, target: `student:${MARKED}` })
    expect(JSON.parse(row!.detail)).toEqual({
      organisations: [fixtures.orgs.acme, fixtures.orgs.beta].sort(),
      progress: 0,
    })
    expect(await columnsHolding(storage, NAME)).toEqual([])
    // The capture works (the erase's request is in it), and names no child.
    expect(logged.join('')).toContain('/dashboard/operator/students/erase')
    expect(logged.join('')).not.toContain(NAME)

    const gone = await operator.get(`/dashboard/operator/students?id=${MARKED}`)
    expect(gone.body).toMatch(/No student has the id/)
    expect(
      (await operator.post('/dashboard/operator/students/erase', { id: MARKED, confirm: MARKED })).statusCode,
    ).toBe(404)
  })

  it('refuses to erase a sandbox student', async () => {
    const page = await operator.get(`/dashboard/operator/students?id=${sandboxStudent}`)
    expect(page.body).toMatch(/sandbox \(made-up\) student/)
    expect(page.body).not.toContain('name="confirm"')
    const refused = await operator.post('/dashboard/operator/students/erase', {
      id: sandboxStudent,
      confirm: sandboxStudent,
    })
    expect(refused.statusCode).toBe(409)
    expect(
      await storage.db.selectFrom('students').select('id').where('id', '=', sandboxStudent).execute(),
    ).toHaveLength(1)
  })
})
