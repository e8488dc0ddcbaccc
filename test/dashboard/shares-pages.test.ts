/**
 * The operator's schools and shares pages: adding a school by hand; on an organisation's page the
 * shares in force with their counts, sharing a school or a pasted list (every bad line told, and
 * nothing shared), ending a share after a confirmation page; the page of shared students with the
 * reasons, by id and external id, page by page. Every change is audited under the operator's
 * account, and the rule that a link exists exactly while a share in force holds it holds after each.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { createSandbox } from '../../src/cases/sandbox.js'
import { sandboxStudents } from '../../src/storage/sandbox-repository.js'
import { changeAttendance } from '../../src/cases/school-attendance.js'
import { listShares } from '../../src/storage/share-listing-repository.js'
import { shareList } from '../../src/cases/shares.js'
import { pageStudentChanges } from '../../src/storage/student-change-log.js'
import { upsertStudents } from '../../src/storage/student-import-repository.js'
import { inTransaction } from '../../src/storage/transaction.js'
import { buildTestApp, STUDENTS } from '../helper.js'
import { expectSharesHoldEveryLink } from '../support/share-invariant.js'
import { type DashboardClient, signedInOperator } from './dashboard-client.js'
import { perSuite } from '../support/built.js'
import { studentIdsOf } from '../support/linked-students.js'

const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`

describe("the operator's schools and shares pages", () => {
  const t = perSuite(() => buildTestApp())
  let operator: DashboardClient
  let acme: string
  let base: string
  let synthetic: string

  beforeAll(async () => {
    operator = await signedInOperator(t, '192.0.2.50')
    acme = t.fixtures.orgs.acme
    base = `/dashboard/operator/organisations/${acme}`
    await upsertStudents(
      t.storage.db,
      Array.from({ length: 105 }, (_, i) => ({
        id: uuid(i + 1),
        firstName: `Pagemark${i + 1}`,
        tier: 'builder' as const,
      })),
      t.clock.now(),
    )
    await t.storage.db.updateTable('students').set({ external_id: 'SIS-7' }).where('id', '=', uuid(7)).execute()
    const sandbox = await createSandbox(t.storage.db, 'share-pages@example.org', t.clock.now())
    synthetic = (await sandboxStudents(t.storage.db, sandbox.id))[0]!.id
  })

  const audit = (action: string) =>
    t.storage.db.selectFrom('audit_log').selectAll().where('action', '=', action).orderBy('id').execute()
  const linked = async () => {
    await expectSharesHoldEveryLink(t.storage.db)
    return studentIdsOf(t.storage.db, acme)
  }

  it('adds a school by hand, audited, and refuses a name taken or missing', async () => {
    const empty = await operator.get('/dashboard/operator/schools')
    expect(empty.statusCode).toBe(200)
    expect(empty.body).toContain('No school yet.')
    const added = await operator.post('/dashboard/operator/schools', { name: ' Hillside Primary ', identifier: 'HP' })
    expect(added.statusCode).toBe(303)
    const page = await operator.follow(added)
    expect(page.body).toContain('School Hillside Primary was added')
    expect(page.body).toMatch(
      /<td>Hillside Primary<\/td><td>HP<\/td><td><\/td><td>added here<\/td><td>0<\/td><td>0<\/td>/,
    )
    const [row] = await audit('schools.add')
    expect(row).toMatchObject({ actor: 'account:ops@example.org', target: expect.stringMatching(/^school:/) })
    expect(JSON.parse(row!.detail)).toEqual({ name: 'Hillside Primary', identifier: 'HP' })

    const taken = await operator.post('/dashboard/operator/schools', { name: 'Hillside Primary' })
    expect(taken.statusCode).toBe(409)
    expect(taken.body).toContain('exists already')
    const missing = await operator.post('/dashboard/operator/schools', { name: '', identifier: 'X' })
    expect(missing.statusCode).toBe(400)
    expect(missing.body).toContain('The name is required.')
    expect(missing.body).toContain('aria-invalid="true"')
    expect(await audit('schools.add')).toHaveLength(1)
  })

  it('shows the shares in force and shares a school, present and future; a second share of it is refused', async () => {
    const school = await t.storage.db
      .selectFrom('schools')
      .select('id')
      .where('name', '=', 'Hillside Primary')
      .executeTakeFirstOrThrow()
    await inTransaction(t.storage.db, (trx) =>
      changeAttendance(
        trx,
        { joined: [uuid(1), uuid(2)].map((studentId) => ({ studentId, schoolId: school.id })), left: [] },
        t.clock.now(),
      ),
    )
    const page = await operator.get(base)
    expect(page.body).toContain('<h2 id="shares">Shared students</h2>')
    // The fixtures' links, made by an import: one list share holding Ada, Ben and Dev.
    expect(page.body).toMatch(/<td>List<\/td><td>Linked by import<\/td><td>3<\/td>/)
    expect(page.body).toContain(`<option value="${school.id}">Hillside Primary (HP), 2 students</option>`)

    const shared = await operator.post(`${base}/shares/school`, { school: school.id })
    expect(shared.statusCode).toBe(303)
    const [share] = (await listShares(t.storage.db, acme)).filter((s) => s.kind === 'school')
    expect(shared.headers.location).toBe(`${base}?shared=${share!.id}#shares`)
    expect((await operator.follow(shared)).body).toContain('School share “Hillside Primary” made: it holds\n2 students')
    expect(await linked()).toEqual([STUDENTS.ada, STUDENTS.ben, STUDENTS.dev, uuid(1), uuid(2)].sort())
    const [row] = await audit('links.add')
    expect(row).toMatchObject({ actor: 'account:ops@example.org', target: `share:${share!.id}` })
    expect(JSON.parse(row!.detail)).toEqual({
      organisation: 'Acme Learning',
      organisationId: acme,
      kind: 'school',
      label: 'Hillside Primary',
      students: 2,
      linked: 2,
    })
    expect(share!.createdBy).toMatch(/^operator:/)

    // Future: a student who joins later is linked.
    await inTransaction(t.storage.db, (trx) =>
      changeAttendance(trx, { joined: [{ studentId: uuid(3), schoolId: school.id }], left: [] }, t.clock.now()),
    )
    expect(await linked()).toContain(uuid(3))

    const twice = await operator.post(`${base}/shares/school`, { school: school.id })
    expect(twice.statusCode).toBe(409)
    expect(twice.body).toContain('Hillside Primary is shared with Acme Learning already.')
    const none = await operator.post(`${base}/shares/school`, { school: 'not a school' })
    expect(none.statusCode).toBe(400)
    expect(await audit('links.add')).toHaveLength(1)
  })

  it('shares a pasted list of ids and external ids, and refuses one naming unknown or sandbox students', async () => {
    const bad = await operator.post(`${base}/shares/list`, {
      students: `${uuid(4)}\n\nSIS-404\n${synthetic}\n`,
      label: 'Reading club',
    })
    expect(bad.statusCode).toBe(400)
    expect(bad.body).toContain('line 3: no student has the id or external id “SIS-404”')
    expect(bad.body).toContain(`line 4: ${synthetic} is a sandbox (made-up) student`)
    // What was typed comes back to be corrected.
    expect(bad.body).toContain('value="Reading club"')
    expect(await linked()).not.toContain(uuid(4))
    const unlabelled = await operator.post(`${base}/shares/list`, { students: uuid(4), label: '' })
    expect(unlabelled.statusCode).toBe(400)
    expect(unlabelled.body).toContain('Give the list a label')
    const forged = await operator.post(`${base}/shares/list`, { _csrf: null, students: uuid(4), label: 'x' })
    expect(forged.statusCode).toBe(403)

    const done = await operator.post(`${base}/shares/list`, {
      students: `${uuid(4)}\r\nSIS-7\r\n${STUDENTS.ada}\r\n${uuid(4)}`,
      label: 'Reading club',
    })
    expect(done.statusCode).toBe(303)
    expect((await operator.follow(done)).body).toContain('List share “Reading club” made: it holds\n3 students')
    expect(await linked()).toEqual(expect.arrayContaining([uuid(4), uuid(7)]))
    expect(JSON.parse((await audit('links.add'))[1]!.detail)).toMatchObject({ kind: 'list', students: 3, linked: 2 })
  })

  it('lists the shared students and why, by id and external id, page by page, without names', async () => {
    t.clock.advance(60_000)
    await shareList(
      t.storage.db,
      {
        organisationId: acme,
        studentIds: Array.from({ length: 100 }, (_, i) => uuid(i + 4)),
        label: 'Whole year',
        createdBy: null,
      },
      t.clock.now(),
    )
    const first = await operator.get(`${base}/shared`)
    expect(first.statusCode).toBe(200)
    expect(first.body.match(/<tr><td><code>/g)).toHaveLength(100)
    expect(first.body).toMatch(
      /<code>00000000-0000-4000-8000-000000000001<\/code><\/td><td><\/td><td>[^<]+<\/td><td>School: Hillside Primary<\/td>/,
    )
    expect(first.body).toMatch(
      /<code>00000000-0000-4000-8000-000000000007<\/code><\/td><td>SIS-7<\/td><td>[^<]+<\/td><td>List: Reading club<br>List: Whole year<\/td>/,
    )
    expect(first.body).not.toContain('Pagemark')
    const next = /<a rel="next" href="([^"]+)"/.exec(first.body)![1]!
    const second = await operator.get(next.replace(/&amp;/g, '&'))
    // uuid(101) to uuid(103), then the fixtures' Ada, Ben and Dev.
    expect(second.body.match(/<tr><td><code>/g)!.length).toBe(6)
    expect(second.body).not.toContain('rel="next"')
  })

  it('ends a share after a confirmation page: those no other share holds are unlinked and the partner told', async () => {
    const [club] = (await listShares(t.storage.db, acme)).filter((s) => s.label === 'Reading club')
    const confirm = await operator.get(`${base}/shares/${club!.id}/end`)
    expect(confirm.statusCode).toBe(200)
    // uuid(4) and uuid(7) are in "Whole year" too, Ada in the fixtures' share: nobody is unlinked.
    expect(confirm.body).toContain('It holds 3 students.')
    expect(confirm.body).toContain('0 of them no other share holds')
    const [school] = (await listShares(t.storage.db, acme)).filter((s) => s.kind === 'school')
    const schoolConfirm = await operator.get(`${base}/shares/${school!.id}/end`)
    expect(schoolConfirm.body).toContain('3 of them no other share holds')
    expect(schoolConfirm.body).toContain('Students who join the school later are no longer linked.')
    expect(await linked()).toContain(uuid(1))

    const ended = await operator.post(`${base}/shares/${school!.id}/end`)
    expect(ended.statusCode).toBe(303)
    expect((await operator.follow(ended)).body).toContain('The share “Hillside Primary” ended.')
    const now = await linked()
    expect(now).not.toContain(uuid(1))
    expect(now).not.toContain(uuid(2))
    expect(now).not.toContain(uuid(3))
    const feed = (await pageStudentChanges(t.storage.db, { organisationId: acme, sandbox: false }, 0, 500))!.changes
    expect(
      feed
        .filter((c) => c.type === 'student_unlinked')
        .map((c) => c.studentId)
        .sort(),
    ).toEqual([uuid(1), uuid(2), uuid(3)])
    const [row] = await audit('links.remove')
    expect(row).toMatchObject({ actor: 'account:ops@example.org', target: `share:${school!.id}` })
    expect(JSON.parse(row!.detail)).toMatchObject({ ended: true, released: 3, unlinked: 3 })
    // Ended: the page says so, and no share in force of it is left to end.
    expect((await operator.get(`${base}/shares/${school!.id}/end`)).body).toContain('nothing to do')
    expect((await operator.get(base)).body).not.toMatch(/<td>School<\/td><td>Hillside Primary<\/td>/)
  })
})
