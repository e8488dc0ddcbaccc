/**
 * Roster imports against exports laid out as the OneRoster 1.1 and 1.2 CSV tables describe them:
 * the preview counts exactly what the import then does, an import is all or nothing, running it
 * again changes nothing, attendance reaches school shares (links made and ended, partners told),
 * a delta erases only when confirmed, no family name or other personal field reaches any column,
 * and an enroll racing an import loses nothing.
 */
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isoAt } from '../../src/clock.js'
import { readOneRoster, type OneRosterExport } from '../../src/roster/oneroster.js'
import {
  applyRosterImport,
  ErasureNotConfirmed,
  planRosterImport,
  RosterImportRefused,
} from '../../src/cases/roster-import/import.js'
import type { Storage } from '../../src/storage/connection.js'
import { enrollStudent } from '../../src/cases/enroll.js'
import { createTestStorage, type Fixtures, seedFixtures, START } from '../helper.js'
import {
  type Files,
  manifest,
  ORGS_HEADER,
  ROLES_HEADER,
  removeTempDirs,
  table,
  USERS_11_HEADER,
  USERS_12_HEADER,
  writeFolder,
} from '../roster/roster-export.js'
import { columnsHolding } from '../support/database-scan.js'
import { perSuite } from '../support/built.js'
import { rowCount } from '../support/row-count.js'

const MINUTE = 60_000
type Row = Readonly<Record<string, string | undefined>>

const ORGS = table(ORGS_HEADER, [
  { sourcedId: 'district-1', name: 'Springfield District', type: 'district' },
  { sourcedId: 'sch-north', name: 'North Elementary', type: 'school', identifier: 'NE-01' },
  { sourcedId: 'sch-south', name: 'South Middle', type: 'school', parentSourcedId: 'district-1' },
])

const student11 = (sourcedId: string, givenName: string, orgSourcedIds: string, familyName: string): Row => ({
  sourcedId,
  enabledUser: 'true',
  orgSourcedIds,
  role: 'student',
  username: `${givenName.toLowerCase()}.${familyName.toLowerCase()}`,
  givenName,
  familyName,
  middleName: 'Quillfeather',
  email: `${givenName.toLowerCase()}@mail.example.org`,
  phone: '555-0142',
  grades: '04',
})

const BULK_11: Files = {
  'manifest.csv': manifest('1.1', { orgs: 'bulk', users: 'bulk' }),
  'orgs.csv': ORGS,
  'users.csv': table(USERS_11_HEADER, [
    { sourcedId: 't1', orgSourcedIds: 'sch-north', role: 'teacher', givenName: 'Mary', familyName: 'Teachwell' },
    student11('s1', 'Ada', 'sch-north', 'Lovelacewood'),
    student11('s2', 'Anne', 'sch-north,sch-south,district-1', 'Curiefield'),
    student11('s3', 'Zoe', 'sch-south', 'Famillename'),
    { sourcedId: 'p1', orgSourcedIds: 'sch-north', role: 'parent', givenName: 'Grace', familyName: 'Parentson' },
  ]),
}

/** 1.2 bulk: s1 now prefers "Addie", s2 left South, s3 is gone, s4 is new at South. */
const BULK_12: Files = {
  'manifest.csv': manifest('1.2', { orgs: 'bulk', users: 'bulk', roles: 'bulk' }),
  'orgs.csv': ORGS,
  'users.csv': table(USERS_12_HEADER, [
    { sourcedId: 's1', givenName: 'Ada', preferredGivenName: 'Addie', familyName: 'Lovelacewood' },
    { sourcedId: 's2', givenName: 'Anne', familyName: 'Curiefield', email: 'anne@mail.example.org' },
    { sourcedId: 's4', givenName: 'Omar', familyName: 'Newcombe', pronouns: 'he/him' },
    { sourcedId: 't1', givenName: 'Mary', familyName: 'Teachwell' },
  ]),
  'roles.csv': table(ROLES_HEADER, [
    { sourcedId: 'r1', userSourcedId: 's1', roleType: 'primary', role: 'student', orgSourcedId: 'sch-north' },
    { sourcedId: 'r2', userSourcedId: 's2', roleType: 'primary', role: 'student', orgSourcedId: 'sch-north' },
    { sourcedId: 'r4', userSourcedId: 's4', roleType: 'primary', role: 'student', orgSourcedId: 'sch-south' },
    { sourcedId: 'r5', userSourcedId: 't1', roleType: 'primary', role: 'teacher', orgSourcedId: 'sch-south' },
  ]),
}

/** 1.2 delta: s1 is deleted; s2 joins South again. */
const DELTA_12: Files = {
  'manifest.csv': manifest('1.2', { orgs: 'absent', users: 'delta', roles: 'delta' }),
  'users.csv': table(USERS_12_HEADER, [{ sourcedId: 's1', status: 'tobedeleted', givenName: 'Ada' }]),
  'roles.csv': table(ROLES_HEADER, [
    { sourcedId: 'r6', status: 'active', userSourcedId: 's2', role: 'student', orgSourcedId: 'sch-south' },
  ]),
}

async function exportOf(files: Files): Promise<OneRosterExport> {
  const read = await readOneRoster(writeFolder(files))
  if (!read.ok) throw new Error(JSON.stringify(read.problems))
  return read
}

describe('roster import', () => {
  const storage = perSuite(() => createTestStorage())
  let fixtures: Fixtures
  let now = START
  const later = () => (now += MINUTE)

  beforeAll(async () => {
    fixtures = await seedFixtures(storage, START)
  })
  afterAll(async () => {
    await storage?.close()
    removeTempDirs()
  })

  const count = (table: 'students' | 'schools' | 'student_schools' | 'student_changes' | 'share_students') =>
    rowCount(storage.db, table)
  const snapshot = async () => ({
    students: await storage.db.selectFrom('students').selectAll().orderBy('id').execute(),
    schools: await storage.db.selectFrom('schools').selectAll().orderBy('id').execute(),
    attendance: await storage.db
      .selectFrom('student_schools')
      .selectAll()
      .orderBy(['student_id', 'school_id'])
      .execute(),
    links: await storage.db
      .selectFrom('student_organisations')
      .selectAll()
      .orderBy(['student_id', 'organisation_id'])
      .execute(),
    changes: await count('student_changes'),
  })
  const byExternal = async (externalId: string) =>
    storage.db.selectFrom('students').selectAll().where('external_id', '=', externalId).executeTakeFirst()
  const schoolsOf = async (externalId: string) =>
    (
      await storage.db
        .selectFrom('student_schools as ss')
        .innerJoin('students as st', 'st.id', 'ss.student_id')
        .innerJoin('schools as s', 's.id', 'ss.school_id')
        .select('s.external_id')
        .where('st.external_id', '=', externalId)
        .orderBy('s.external_id')
        .execute()
    ).map((row) => row.external_id)

  it('previews a 1.1 bulk export exactly, then imports it; the same import again changes nothing', async () => {
    const roster = await exportOf(BULK_11)
    const preview = await planRosterImport(storage.db, roster, { now: later() })
    expect(preview).toMatchObject({
      version: '1.1',
      kind: 'bulk',
      tier: 'explorer',
      problems: [],
      students: { new: 3, changed: 0, unchanged: 0, noLongerPresent: 0, toErase: 0 },
      schools: { new: 2, changed: 0, unchanged: 0, leaving: 0 },
      attendance: { joining: 4, leaving: 0 },
    })
    const before = await snapshot()
    expect(before.schools).toEqual([])

    const outcome = await applyRosterImport(storage.db, roster, { now: later(), tier: 'builder' })
    expect(outcome.students).toEqual({ ...preview.students })
    expect(outcome.schools).toEqual(preview.schools)
    expect(outcome.attendance).toEqual(preview.attendance)
    expect(await byExternal('s1')).toMatchObject({ first_name: 'Ada', tier: 'builder', sandbox: 0 })
    expect(await schoolsOf('s2')).toEqual(['sch-north', 'sch-south'])
    expect(await count('students')).toBe(4 + 3)
    const school = await storage.db.selectFrom('schools').selectAll().where('external_id', '=', 'sch-north').execute()
    expect(school).toMatchObject([{ name: 'North Elementary', identifier: 'NE-01' }])
    // Each new student's tier is in the change log, as every import's is.
    const after = await snapshot()
    expect(after.changes - before.changes).toBe(3)

    const again = await planRosterImport(storage.db, roster, { now: later() })
    expect(again.students).toMatchObject({ new: 0, changed: 0, unchanged: 3, noLongerPresent: 0 })
    expect(again.schools).toEqual({ new: 0, changed: 0, unchanged: 2, leaving: 0 })
    expect(again.attendance).toEqual({ joining: 0, leaving: 0 })
    await applyRosterImport(storage.db, roster, { now: later() })
    expect(await snapshot()).toEqual(after)
  })

  it('never stores a family name, e-mail address, username or phone number', async () => {
    for (const value of ['Lovelacewood', 'Curiefield', 'Quillfeather', 'mail.example.org', '555-0142', 'Teachwell'])
      expect(await columnsHolding(storage, value), value).toEqual([])
    expect(await columnsHolding(storage, 'Grace')).toEqual([])
  })

  it('moves attendance with a 1.2 bulk export, and school shares follow it', async () => {
    const south = await storage.db
      .selectFrom('schools')
      .select('id')
      .where('external_id', '=', 'sch-south')
      .executeTakeFirstOrThrow()
    // A school share of South for Acme, made by hand: its students present are linked.
    const shareId = randomUUID()
    const at = isoAt(later())
    await storage.db
      .insertInto('shares')
      .values({
        id: shareId,
        organisation_id: fixtures.orgs.acme,
        kind: 'school',
        school_id: south.id,
        label: 'South',
        created_at: at,
        created_by: 'test',
        ended_at: null,
      })
      .execute()
    for (const externalId of ['s2', 's3']) {
      const student = (await byExternal(externalId))!
      await storage.db
        .insertInto('share_students')
        .values({ share_id: shareId, student_id: student.id, organisation_id: fixtures.orgs.acme })
        .execute()
      await storage.db
        .insertInto('student_organisations')
        .values({ student_id: student.id, organisation_id: fixtures.orgs.acme, created_at: at })
        .execute()
    }

    const roster = await exportOf(BULK_12)
    const preview = await planRosterImport(storage.db, roster, { now: later() })
    expect(preview.problems).toEqual([])
    expect(preview.students).toMatchObject({
      new: 1,
      changed: 2,
      renamed: 1,
      changedSchools: 1,
      unchanged: 0,
      noLongerPresent: 1,
      leavingAllSchools: 1,
    })
    expect(preview.attendance).toEqual({ joining: 1, leaving: 2 })

    const outcome = await applyRosterImport(storage.db, roster, { now: later() })
    expect(outcome.students).toEqual(preview.students)
    expect(outcome.attendance).toEqual(preview.attendance)
    expect(outcome.links).toEqual({ made: 1, ended: 2 })
    expect(await byExternal('s1')).toMatchObject({ first_name: 'Addie' })
    expect(await schoolsOf('s2')).toEqual(['sch-north'])
    // No longer present: kept, attending nothing.
    expect(await byExternal('s3')).toMatchObject({ first_name: 'Zoe' })
    expect(await schoolsOf('s3')).toEqual([])
    const s4 = (await byExternal('s4'))!
    const linked = await storage.db
      .selectFrom('student_organisations')
      .select('student_id')
      .where('organisation_id', '=', fixtures.orgs.acme)
      .execute()
    const ids = linked.map((row) => row.student_id)
    expect(ids).toContain(s4.id)
    expect(ids).not.toContain((await byExternal('s2'))!.id)
    const notices = await storage.db
      .selectFrom('student_changes')
      .select(['student_id', 'kind'])
      .where('kind', '=', 'student_unlinked')
      .execute()
    expect(notices.map((n) => n.student_id).sort()).toEqual(
      [(await byExternal('s2'))!.id, (await byExternal('s3'))!.id].sort(),
    )
  })

  it("erases a delta's tobedeleted students only when confirmed, with the rest of the delta", async () => {
    const roster = await exportOf(DELTA_12)
    const preview = await planRosterImport(storage.db, roster, { now: later() })
    expect(preview).toMatchObject({ kind: 'delta', problems: [] })
    expect(preview.students).toMatchObject({ toErase: 1, changed: 1, changedSchools: 1, new: 0 })
    expect(preview.attendance).toEqual({ joining: 1, leaving: 0 })

    const before = await snapshot()
    await expect(applyRosterImport(storage.db, roster, { now: later() })).rejects.toBeInstanceOf(ErasureNotConfirmed)
    expect(await snapshot()).toEqual(before)

    const s1 = (await byExternal('s1'))!
    const outcome = await applyRosterImport(storage.db, roster, { now: later(), confirmErase: true })
    expect(outcome.erased).toEqual([s1.id])
    expect(await byExternal('s1')).toBeUndefined()
    expect(await columnsHolding(storage, s1.first_name)).toEqual([])
    expect(await schoolsOf('s2')).toEqual(['sch-north', 'sch-south'])
  })

  it('writes nothing when one row has a problem the preview found', async () => {
    const roster = await exportOf({
      'manifest.csv': manifest('1.1', { orgs: 'delta', users: 'delta' }),
      'orgs.csv': table(ORGS_HEADER, [{ sourcedId: 'sch-east', status: 'active', name: 'East High', type: 'school' }]),
      'users.csv': table(USERS_11_HEADER, [
        { ...student11('s7', 'Kai', 'sch-east', 'Eastwood'), status: 'active' },
        { ...student11('s8', 'Lena', 'sch-west', 'Westwood'), status: 'active' },
      ]),
    })
    const preview = await planRosterImport(storage.db, roster, { now: later() })
    expect(preview.problems).toEqual([
      {
        file: 'users.csv',
        line: 3,
        field: 'orgSourcedIds',
        message: 'names the school "sch-west", which neither this export\'s orgs.csv nor the service holds',
      },
    ])
    const before = await snapshot()
    await expect(applyRosterImport(storage.db, roster, { now: later() })).rejects.toBeInstanceOf(RosterImportRefused)
    expect(await snapshot()).toEqual(before)
  })

  it("reports a sandbox student's external id, and a kept student's bad first name in a delta", async () => {
    await storage.db
      .insertInto('students')
      .values({
        id: randomUUID(),
        external_id: 'sbx-1',
        first_name: 'Synthia',
        tier: 'explorer',
        tier_updated_at: isoAt(now),
        created_at: isoAt(now),
        updated_at: null,
        sandbox: 1,
      })
      .execute()
    const roster = await exportOf({
      'manifest.csv': manifest('1.2', { orgs: 'absent', users: 'delta', roles: 'delta' }),
      'users.csv': table(USERS_12_HEADER, [
        { sourcedId: 'sbx-1', status: 'active', givenName: 'Real', familyName: 'Childname' },
        // No role in this delta: a user the service may keep (s4 it does, t9 it does not).
        { sourcedId: 's4', status: 'active', givenName: '', familyName: 'Newcombe' },
        { sourcedId: 't9', status: 'active', givenName: '', familyName: 'Teacherly' },
      ]),
      'roles.csv': table(ROLES_HEADER, [
        { sourcedId: 'r9', status: 'active', userSourcedId: 'sbx-1', role: 'student', orgSourcedId: 'sch-north' },
      ]),
    })
    const preview = await planRosterImport(storage.db, roster, { now: later() })
    expect(preview.problems).toEqual([
      {
        file: 'users.csv',
        line: 2,
        field: 'sourcedId',
        message: 'is the external id of a sandbox (synthetic) student; imports never change sandbox students',
      },
      { file: 'users.csv', line: 3, field: 'givenName', message: expect.any(String) },
    ])
    const before = await snapshot()
    await expect(applyRosterImport(storage.db, roster, { now: later() })).rejects.toBeInstanceOf(RosterImportRefused)
    expect(await snapshot()).toEqual(before)
    await storage.db.deleteFrom('students').where('external_id', '=', 'sbx-1').execute()
  })

  it('loses no enroll that races an import', async () => {
    const s2 = (await byExternal('s2'))!
    const current = s2.tier === 'innovator' ? 'builder' : 'innovator'
    const many = Array.from({ length: 1500 }, (_, i) => student11(`bulk-${i}`, 'Sam', 'sch-north', 'Racer'))
    const roster = await exportOf({
      'manifest.csv': manifest('1.1', { orgs: 'bulk', users: 'bulk' }),
      'orgs.csv': ORGS,
      'users.csv': table(USERS_11_HEADER, [student11('s2', 'Annie', 'sch-north,sch-south', 'Curiefield'), ...many]),
    })
    const access = {
      at: now,
      requestId: randomUUID(),
      keyId: fixtures.keyIds.readWrite,
      organisationId: fixtures.orgs.acme,
      sandbox: false,
    }
    // s2 is linked to Acme (through South's share again since the delta; or by hand).
    await storage.db
      .insertInto('student_organisations')
      .values({ student_id: s2.id, organisation_id: fixtures.orgs.acme, created_at: isoAt(now) })
      .onConflict((oc) => oc.columns(['student_id', 'organisation_id']).doNothing())
      .execute()
    const importing = applyRosterImport(storage.db, roster, {
      now: later(),
      pause: () => new Promise((r) => setImmediate(r)),
    })
    const enrolled = enrollStudent(storage.writes, s2.id, current, access, later())
    const [, enrollment] = await Promise.all([importing, enrolled])
    expect(enrollment).toMatchObject({ tier: current, changed: true })
    expect(await byExternal('s2')).toMatchObject({ first_name: 'Annie', tier: current })
    const logged = await storage.db
      .selectFrom('student_changes')
      .select('tier')
      .where('student_id', '=', s2.id)
      .where('kind', '=', 'tier_changed')
      .orderBy('seq', 'desc')
      .executeTakeFirstOrThrow()
    expect(logged.tier).toBe(current)
    expect(await count('students')).toBeGreaterThanOrEqual(1500)
  }, 60_000)
})

describe('roster import in batches', () => {
  let storage: Storage
  let now = START
  beforeAll(async () => {
    storage = await createTestStorage()
    await seedFixtures(storage, START)
  })

  it('commits batch by batch to the same outcome as one transaction, and again changes nothing', async () => {
    const batches = { commit: 'batches' as const }
    const first = await applyRosterImport(storage.db, await exportOf(BULK_11), { now: (now += MINUTE), ...batches })
    expect(first).toMatchObject({ complete: true, students: { new: 3 }, attendance: { joining: 4 } })
    const second = await applyRosterImport(storage.db, await exportOf(BULK_12), { now: (now += MINUTE), ...batches })
    expect(second.students).toMatchObject({ new: 1, changed: 2, noLongerPresent: 1, leavingAllSchools: 1 })
    await expect(
      applyRosterImport(storage.db, await exportOf(DELTA_12), { now: (now += MINUTE), ...batches }),
    ).rejects.toBeInstanceOf(ErasureNotConfirmed)
    const delta = await applyRosterImport(storage.db, await exportOf(DELTA_12), {
      now: (now += MINUTE),
      confirmErase: true,
      ...batches,
    })
    expect(delta.erased).toHaveLength(1)
    const again = await applyRosterImport(storage.db, await exportOf(BULK_12), { now: (now += MINUTE), ...batches })
    expect(again.students).toMatchObject({ new: 1, changed: 1, unchanged: 1 })
    const rows = await storage.db
      .selectFrom('students')
      .select(['external_id', 'first_name'])
      .where('external_id', 'is not', null)
      .orderBy('external_id')
      .execute()
    expect(rows).toEqual([
      { external_id: 's1', first_name: 'Addie' },
      { external_id: 's2', first_name: 'Anne' },
      { external_id: 's3', first_name: 'Zoe' },
      { external_id: 's4', first_name: 'Omar' },
    ])
  })
})
