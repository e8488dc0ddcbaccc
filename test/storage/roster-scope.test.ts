/**
 * Roster imports of several districts and regions: a bulk export speaks for the schools it lists,
 * from its source system, and nothing else. Alternating two districts' exports (different
 * versions and source systems) or two regions' of one district ends no link and sends no notice;
 * a student two districts list (a transfer) attends both, and leaving one keeps the other; a
 * school another source keeps is never taken over; the preview names the source, the schools
 * with who joins and leaves each, and the links each partner would lose.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readOneRoster, type OneRosterExport } from '../../src/roster/oneroster.js'
import { applyRosterImport, planRosterImport, RosterImportRefused } from '../../src/cases/roster-import/import.js'
import type { Storage } from '../../src/storage/connection.js'
import { shareSchool } from '../../src/cases/shares.js'
import { createTestStorage, type Fixtures, seedFixtures, START } from '../helper.js'
import {
  csv,
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

const MINUTE = 60_000

/** A manifest naming its own source system instead of roster-export.ts's. */
function manifestOf(version: '1.1' | '1.2', modes: Record<string, string>, code: string, name: string): string {
  return manifest(version, modes)
    .replace(/source\.systemName,[^\r\n]*/, `source.systemName,${name}`)
    .replace(/source\.systemCode,[^\r\n]*/, `source.systemCode,${code}`)
}

type Student = { id: string; name: string; schools: string[] }

/** A 1.2 bulk export of `students` at `schools` (all of one district), from `code`. */
function bulk12(code: string, district: string, schools: [string, string][], students: Student[]): Files {
  return {
    'manifest.csv': manifestOf('1.2', { orgs: 'bulk', users: 'bulk', roles: 'bulk' }, code, `${code} system`),
    'orgs.csv': table(ORGS_HEADER, [
      { sourcedId: district, name: `${district} office`, type: 'district' },
      ...schools.map(([id, name]) => ({ sourcedId: id, name, type: 'school', parentSourcedId: district })),
    ]),
    'users.csv': table(
      USERS_12_HEADER,
      students.map((s) => ({ sourcedId: s.id, givenName: s.name, familyName: 'Familyname' })),
    ),
    'roles.csv': table(
      ROLES_HEADER,
      students.flatMap((s) =>
        s.schools.map((school, i) => ({
          sourcedId: `r-${s.id}-${school}`,
          userSourcedId: s.id,
          roleType: i === 0 ? 'primary' : 'secondary',
          role: 'student',
          orgSourcedId: school,
        })),
      ),
    ),
  }
}

/** A 1.1 bulk export, whose users.csv gives each student's schools itself. */
function bulk11(code: string, district: string, schools: [string, string][], students: Student[]): Files {
  return {
    'manifest.csv': manifestOf('1.1', { orgs: 'bulk', users: 'bulk' }, code, `${code} system`),
    'orgs.csv': table(ORGS_HEADER, [
      { sourcedId: district, name: `${district} office`, type: 'district' },
      ...schools.map(([id, name]) => ({ sourcedId: id, name, type: 'school', parentSourcedId: district })),
    ]),
    'users.csv': table(
      USERS_11_HEADER,
      students.map((s) => ({
        sourcedId: s.id,
        role: 'student',
        orgSourcedIds: s.schools.join(','),
        givenName: s.name,
        familyName: 'Familyname',
      })),
    ),
  }
}

async function exportOf(files: Files): Promise<OneRosterExport> {
  const read = await readOneRoster(writeFolder(files))
  if (!read.ok) throw new Error(JSON.stringify(read.problems))
  return read
}

const A_SCHOOLS: [string, string][] = [
  ['a-elem', 'Ashford Elementary'],
  ['a-mid', 'Ashford Middle'],
]
const A_STUDENTS: Student[] = [
  { id: 'a1', name: 'Maya', schools: ['a-elem'] },
  { id: 'a2', name: 'Omar', schools: ['a-elem'] },
  { id: 'a3', name: 'Lena', schools: ['a-mid'] },
]
const B_SCHOOLS: [string, string][] = [['b-elem', 'Brookside Elementary']]
const B_STUDENTS: Student[] = [
  { id: 'b1', name: 'Kai', schools: ['b-elem'] },
  { id: 'b2', name: 'Ines', schools: ['b-elem'] },
]

describe('roster imports of several districts and regions', () => {
  let storage: Storage
  let fixtures: Fixtures
  let now = START
  const later = () => (now += MINUTE)

  beforeAll(async () => {
    storage = await createTestStorage()
    fixtures = await seedFixtures(storage, START)
  })
  afterAll(async () => {
    await storage?.close()
    removeTempDirs()
  })

  const schoolId = async (externalId: string) =>
    (
      await storage.db
        .selectFrom('schools')
        .select('id')
        .where('external_id', '=', externalId)
        .executeTakeFirstOrThrow()
    ).id
  /** Each roster school's students (by sourcedId), and every link, and every notice. */
  const state = async () => {
    const attendance = await storage.db
      .selectFrom('student_schools as ss')
      .innerJoin('students as st', 'st.id', 'ss.student_id')
      .innerJoin('schools as s', 's.id', 'ss.school_id')
      .select(['s.external_id as school', 'st.external_id as student'])
      .orderBy('s.external_id')
      .orderBy('st.external_id')
      .execute()
    const bySchool: Record<string, string[]> = {}
    for (const row of attendance) (bySchool[row.school!] ??= []).push(row.student!)
    const links = await storage.db
      .selectFrom('student_organisations as so')
      .innerJoin('students as st', 'st.id', 'so.student_id')
      .select(['st.external_id', 'so.organisation_id'])
      .where('st.external_id', 'is not', null)
      .orderBy('st.external_id')
      .orderBy('so.organisation_id')
      .execute()
    const notices = await storage.db
      .selectFrom('student_changes')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('kind', '=', 'student_unlinked')
      .executeTakeFirstOrThrow()
    const deliveries = await storage.db
      .selectFrom('webhook_deliveries')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow()
    return {
      bySchool,
      links: links.map((l) => `${l.external_id} ${l.organisation_id}`),
      notices: Number(notices.n),
      deliveries: Number(deliveries.n),
    }
  }

  it("alternates two districts' bulk exports, twice, and ends no link and sends no notice", async () => {
    const a = await exportOf(bulk12('SIS-A', 'district-a', A_SCHOOLS, A_STUDENTS))
    const b = await exportOf(bulk11('SIS-B', 'district-b', B_SCHOOLS, B_STUDENTS))
    await applyRosterImport(storage.db, a, { now: later() })
    await applyRosterImport(storage.db, b, { now: later() })
    // Each district's elementary school is shared with a partner: its students are linked.
    await shareSchool(
      storage.db,
      { organisationId: fixtures.orgs.acme, schoolId: await schoolId('a-elem'), createdBy: 'test' },
      later(),
    )
    await shareSchool(
      storage.db,
      { organisationId: fixtures.orgs.beta, schoolId: await schoolId('b-elem'), createdBy: 'test' },
      later(),
    )
    const settled = await state()
    expect(settled.bySchool).toEqual({ 'a-elem': ['a1', 'a2'], 'a-mid': ['a3'], 'b-elem': ['b1', 'b2'] })
    expect(settled.links).toHaveLength(4)

    for (const roster of [a, b, a, b]) {
      const preview = await planRosterImport(storage.db, roster, { now: later() })
      expect(preview.problems).toEqual([])
      expect(preview.students).toMatchObject({ new: 0, changed: 0, noLongerPresent: 0 })
      expect(preview.attendance).toEqual({ joining: 0, leaving: 0 })
      expect(preview.coverage.partners).toEqual([])
      const outcome = await applyRosterImport(storage.db, roster, { now: later() })
      expect(outcome.links).toEqual({ made: 0, ended: 0 })
      expect(await state()).toEqual(settled)
    }

    // Each school keeps the source and district of the export that brought it.
    const schools = await storage.db
      .selectFrom('schools')
      .select(['external_id', 'source', 'district_external_id'])
      .orderBy('external_id')
      .execute()
    expect(schools).toEqual([
      { external_id: 'a-elem', source: 'SIS-A', district_external_id: 'district-a' },
      { external_id: 'a-mid', source: 'SIS-A', district_external_id: 'district-a' },
      { external_id: 'b-elem', source: 'SIS-B', district_external_id: 'district-b' },
    ])
    const students = await storage.db
      .selectFrom('students')
      .select(['external_id', 'source'])
      .where('external_id', 'is not', null)
      .orderBy('external_id')
      .execute()
    expect(students.map((s) => `${s.external_id} ${s.source}`)).toEqual([
      'a1 SIS-A',
      'a2 SIS-A',
      'a3 SIS-A',
      'b1 SIS-B',
      'b2 SIS-B',
    ])
  })

  it('names what a preview covers: the source, the district, each school with who joins and leaves, and links per partner', async () => {
    const a = await exportOf(
      bulk12('SIS-A', 'district-a', A_SCHOOLS, [
        { id: 'a1', name: 'Maya', schools: ['a-mid'] },
        { id: 'a3', name: 'Lena', schools: ['a-mid'] },
        { id: 'a4', name: 'Noor', schools: ['a-elem'] },
      ]),
    )
    const before = await state()
    const preview = await planRosterImport(storage.db, a, { now: later() })
    expect(preview.problems).toEqual([])
    expect(preview.coverage.source).toEqual({ systemCode: 'SIS-A', systemName: 'SIS-A system' })
    expect(preview.coverage.districts).toEqual([{ sourcedId: 'district-a', name: 'district-a office' }])
    // a1 moves to Middle, a2 is gone, a4 is new at Elementary.
    expect(preview.coverage.schools).toEqual([
      {
        sourcedId: 'a-elem',
        name: 'Ashford Elementary',
        joining: 1,
        leaving: 2,
        removed: false,
        withoutStudents: false,
      },
      { sourcedId: 'a-mid', name: 'Ashford Middle', joining: 1, leaving: 0, removed: false, withoutStudents: false },
    ])
    expect(preview.coverage.partners).toEqual([{ organisationId: fixtures.orgs.acme, name: 'Acme Learning', links: 2 }])
    expect(preview.students).toMatchObject({ noLongerPresent: 1, leavingAllSchools: 1, new: 1 })
    expect(await state()).toEqual(before)

    const outcome = await applyRosterImport(storage.db, a, { now: later() })
    expect(outcome.links.ended).toBe(2)
    expect(outcome.coverage.partners).toEqual(preview.coverage.partners)
    const after = await state()
    expect(after.bySchool).toEqual({ 'a-elem': ['a4'], 'a-mid': ['a1', 'a3'], 'b-elem': ['b1', 'b2'] })
    expect(after.notices - before.notices).toBe(2)
  })

  it("keeps a transfer student in both districts' schools, and leaving one district keeps the other", async () => {
    const students = (extra: Student[]) => [...B_STUDENTS, ...extra]
    // District B's system spells the child's first name its own way: district A's, which listed them first, stays.
    const b = await exportOf(
      bulk11('SIS-B', 'district-b', B_SCHOOLS, students([{ id: 'a3', name: 'Lenny', schools: ['b-elem'] }])),
    )
    const a = await exportOf(
      bulk12('SIS-A', 'district-a', A_SCHOOLS, [
        { id: 'a1', name: 'Maya', schools: ['a-mid'] },
        { id: 'a3', name: 'Lena', schools: ['a-mid'] },
        { id: 'a4', name: 'Noor', schools: ['a-elem'] },
      ]),
    )
    const joining = await planRosterImport(storage.db, b, { now: later() })
    expect(joining.students).toMatchObject({ keptByAnotherSource: 1, renamed: 0, changedSchools: 1 })
    await applyRosterImport(storage.db, b, { now: later() })
    const a3 = await storage.db
      .selectFrom('students')
      .select(['first_name', 'source'])
      .where('external_id', '=', 'a3')
      .executeTakeFirstOrThrow()
    expect(a3).toEqual({ first_name: 'Lena', source: 'SIS-A' })
    const both = await state()
    expect(both.bySchool['a-mid']).toEqual(['a1', 'a3'])
    expect(both.bySchool['b-elem']).toEqual(['a3', 'b1', 'b2'])
    expect(both.links.filter((l) => l.startsWith('a3 '))).toEqual([`a3 ${fixtures.orgs.beta}`])
    for (const roster of [a, b, a]) {
      await applyRosterImport(storage.db, roster, { now: later() })
      expect(await state()).toEqual(both)
    }

    // District A no longer lists a3: a3 leaves A's schools, keeps B's, and Beta keeps its link.
    const aWithout = await exportOf(
      bulk12('SIS-A', 'district-a', A_SCHOOLS, [
        { id: 'a1', name: 'Maya', schools: ['a-mid'] },
        { id: 'a4', name: 'Noor', schools: ['a-elem'] },
      ]),
    )
    const preview = await planRosterImport(storage.db, aWithout, { now: later() })
    expect(preview.students).toMatchObject({ noLongerPresent: 1, leavingAllSchools: 0 })
    expect(preview.coverage.partners).toEqual([])
    await applyRosterImport(storage.db, aWithout, { now: later() })
    const after = await state()
    expect(after.bySchool['a-mid']).toEqual(['a1'])
    expect(after.bySchool['b-elem']).toEqual(['a3', 'b1', 'b2'])
    expect(after.links).toEqual(both.links)
    expect(after.notices).toBe(both.notices)
  })

  it("alternates two regions' exports of one district, twice, and ends no link, each listing all its schools", async () => {
    // Each region's export lists every school of the district, as district-wide orgs.csv files do,
    // and only its own region's students.
    const schools: [string, string][] = [
      ['r-north', 'North Region School'],
      ['r-south', 'South Region School'],
    ]
    const north = await exportOf(
      bulk12('SIS-R', 'district-r', schools, [
        { id: 'rn1', name: 'Ava', schools: ['r-north'] },
        { id: 'rn2', name: 'Ben', schools: ['r-north'] },
      ]),
    )
    const south = await exportOf(
      bulk12('SIS-R', 'district-r', schools, [{ id: 'rs1', name: 'Cy', schools: ['r-south'] }]),
    )
    await applyRosterImport(storage.db, north, { now: later() })
    await applyRosterImport(storage.db, south, { now: later() })
    await shareSchool(
      storage.db,
      { organisationId: fixtures.orgs.acme, schoolId: await schoolId('r-north'), createdBy: 'test' },
      later(),
    )
    await shareSchool(
      storage.db,
      { organisationId: fixtures.orgs.acme, schoolId: await schoolId('r-south'), createdBy: 'test' },
      later(),
    )
    const settled = await state()
    expect(settled.bySchool['r-north']).toEqual(['rn1', 'rn2'])
    expect(settled.bySchool['r-south']).toEqual(['rs1'])
    const preview = await planRosterImport(storage.db, north, { now: later() })
    expect(preview.coverage.schools).toEqual([
      {
        sourcedId: 'r-north',
        name: 'North Region School',
        joining: 0,
        leaving: 0,
        removed: false,
        withoutStudents: false,
      },
      {
        sourcedId: 'r-south',
        name: 'South Region School',
        joining: 0,
        leaving: 0,
        removed: false,
        withoutStudents: true,
      },
    ])
    for (const roster of [north, south, north, south]) {
      const outcome = await applyRosterImport(storage.db, roster, { now: later() })
      expect(outcome.links).toEqual({ made: 0, ended: 0 })
      expect(outcome.students.noLongerPresent).toBe(0)
      expect(await state()).toEqual(settled)
    }
  })

  it('refuses, writing nothing, an export that names a school another source system keeps', async () => {
    const before = await state()
    // System C reuses district A's school id: neither its orgs.csv nor its students may change it.
    const c = await exportOf(
      bulk11(
        'SIS-C',
        'district-c',
        [
          ['a-elem', 'Coldwater Elementary'],
          ['c-high', 'Coldwater High'],
        ],
        [
          { id: 'c1', name: 'Rui', schools: ['c-high'] },
          { id: 'c2', name: 'Sol', schools: ['a-elem'] },
        ],
      ),
    )
    const preview = await planRosterImport(storage.db, c, { now: later() })
    const message =
      'names the school "a-elem", which the service keeps from the source system "SIS-A", not this export\'s "SIS-C": ' +
      "an export changes only its own source's schools and their students (docs/rosters.md, several districts)"
    expect(preview.problems).toEqual([
      { file: 'orgs.csv', line: 3, field: 'sourcedId', message },
      { file: 'users.csv', line: 3, field: 'orgSourcedIds', message },
    ])
    await expect(applyRosterImport(storage.db, c, { now: later() })).rejects.toBeInstanceOf(RosterImportRefused)
    expect(await state()).toEqual(before)
    const school = await storage.db
      .selectFrom('schools')
      .select(['name', 'source'])
      .where('external_id', '=', 'a-elem')
      .executeTakeFirstOrThrow()
    expect(school).toEqual({ name: 'Ashford Elementary', source: 'SIS-A' })
  })

  it('lets the first export of a known source claim a school kept before sources were', async () => {
    await storage.db.updateTable('schools').set({ source: null }).where('external_id', '=', 'b-elem').execute()
    const b = await exportOf(
      bulk11('SIS-B', 'district-b', B_SCHOOLS, [...B_STUDENTS, { id: 'a3', name: 'Lena', schools: ['b-elem'] }]),
    )
    const before = await state()
    const outcome = await applyRosterImport(storage.db, b, { now: later() })
    expect(outcome.links).toEqual({ made: 0, ended: 0 })
    expect(await state()).toEqual(before)
    const school = await storage.db
      .selectFrom('schools')
      .select('source')
      .where('external_id', '=', 'b-elem')
      .executeTakeFirstOrThrow()
    expect(school.source).toBe('SIS-B')
  })

  it("reads a manifest without a source: its schools are nobody else's to keep", async () => {
    const files = bulk11(
      'SIS-D',
      'district-d',
      [['d-elem', 'Dale Elementary']],
      [{ id: 'd1', name: 'Tom', schools: ['d-elem'] }],
    )
    files['manifest.csv'] = csv(
      ['propertyName', 'value'],
      [
        ['manifest.version', '1.0'],
        ['oneroster.version', '1.1'],
        ['file.orgs', 'bulk'],
        ['file.users', 'bulk'],
      ],
    )
    const d = await exportOf(files)
    expect(d.source).toEqual({ systemCode: null, systemName: null })
    const before = await state()
    const outcome = await applyRosterImport(storage.db, d, { now: later() })
    expect(outcome.students.new).toBe(1)
    expect(outcome.students.noLongerPresent).toBe(0)
    const after = await state()
    expect(after.bySchool['d-elem']).toEqual(['d1'])
    expect(after.links).toEqual(before.links)
  })
})
