/**
 * The OneRoster reader against exports laid out as the specification's CSV tables describe them
 * (versions 1.1 and 1.2, bulk and delta, from folders and .zip files), and against broken ones.
 */
import { afterAll, describe, expect, it } from 'vitest'
import {
  formatImportProblem,
  readOneRoster,
  type OneRosterExport,
  type OneRosterFailure,
  type OneRosterLimits,
} from '../../src/roster/oneroster.js'
import {
  ENROLLMENTS_11_HEADER,
  type Files,
  manifest,
  ORGS_HEADER,
  ROLES_HEADER,
  removeTempDirs,
  table,
  USERS_11_HEADER,
  USERS_12_HEADER,
  writeFolder,
  writeZip,
} from './roster-export.js'

afterAll(removeTempDirs)

type Row = Readonly<Record<string, string | undefined>>

const ORGS = table(ORGS_HEADER, [
  { sourcedId: 'district-1', name: 'Springfield District', type: 'district', identifier: 'D1' },
  {
    sourcedId: 'sch-north',
    name: 'North Elementary',
    type: 'school',
    identifier: 'NE-01',
    parentSourcedId: 'district-1',
  },
  { sourcedId: 'sch-south', status: 'active', name: 'South Middle', type: 'school', parentSourcedId: 'district-1' },
])

const SCHOOLS = [
  {
    status: 'active',
    sourcedId: 'sch-north',
    name: 'North Elementary',
    identifier: 'NE-01',
    district: 'district-1',
    line: 3,
  },
  {
    status: 'active',
    sourcedId: 'sch-south',
    name: 'South Middle',
    identifier: null,
    district: 'district-1',
    line: 4,
  },
]
/** The manifest's source (roster-export.ts) and orgs.csv's district. */
const SOURCE = { systemCode: 'SIS-1', systemName: 'District SIS' }
const DISTRICTS = [{ sourcedId: 'district-1', name: 'Springfield District' }]

function bulk11(users: readonly Row[], extra: Files = {}): Files {
  return {
    'manifest.csv': manifest('1.1', { orgs: 'bulk', users: 'bulk', enrollments: 'bulk' }),
    'orgs.csv': ORGS,
    'users.csv': table(USERS_11_HEADER, users),
    'enrollments.csv': table(ENROLLMENTS_11_HEADER, [
      { sourcedId: 'e1', classSourcedId: 'c1', schoolSourcedId: 'sch-north', userSourcedId: 's1', role: 'student' },
    ]),
    ...extra,
  }
}

const USERS_11 = [
  {
    sourcedId: 't1',
    enabledUser: 'true',
    orgSourcedIds: 'sch-north',
    role: 'teacher',
    username: 'mlee',
    givenName: 'Mary Ann',
    familyName: 'Lee',
    email: 'mlee@example.org',
  },
  {
    sourcedId: 's1',
    enabledUser: 'true',
    orgSourcedIds: 'sch-north',
    role: 'student',
    username: 'alovelace',
    userIds: '{SIS:1001}',
    givenName: 'Ada',
    familyName: 'Lovelace',
    middleName: 'Augusta',
    identifier: '1001',
    email: 'ada@example.org',
    grades: '03',
  },
  {
    sourcedId: 's2',
    status: 'active',
    enabledUser: 'true',
    orgSourcedIds: 'sch-north,sch-south,district-1',
    role: 'student',
    givenName: 'Anne-Marie',
    familyName: 'Curie',
    grades: '05',
  },
  { sourcedId: 'p1', enabledUser: 'true', orgSourcedIds: 'sch-north', role: 'parent', givenName: 'Grace' },
  // "Zoë" written with a combining diaeresis: kept in its composed form.
  { sourcedId: 's3', enabledUser: 'true', orgSourcedIds: ' sch-south ', role: 'student', givenName: 'Zoe\u0308' },
]

const STUDENTS_11 = [
  { status: 'active', sourcedId: 's1', firstName: 'Ada', schoolSourcedIds: ['sch-north'], line: 3 },
  { status: 'active', sourcedId: 's2', firstName: 'Anne-Marie', schoolSourcedIds: ['sch-north', 'sch-south'], line: 4 },
  { status: 'active', sourcedId: 's3', firstName: 'Zoë', schoolSourcedIds: ['sch-south'], line: 6 },
]

function bulk12(users: readonly Row[], roles: readonly Row[]): Files {
  return {
    'manifest.csv': manifest('1.2', { orgs: 'bulk', users: 'bulk', roles: 'bulk' }),
    'orgs.csv': ORGS,
    'users.csv': table(USERS_12_HEADER, users),
    'roles.csv': table(ROLES_HEADER, roles),
  }
}

const USERS_12 = [
  { sourcedId: 't1', enabledUser: 'true', username: 'mlee', givenName: 'Mary Ann', familyName: 'Lee' },
  {
    sourcedId: 's1',
    enabledUser: 'true',
    username: 'agrant',
    givenName: 'Alexandra',
    familyName: 'Grant',
    preferredGivenName: 'Alex',
    preferredFamilyName: 'Grant-Smith',
    pronouns: 'she/her',
    primaryOrgSourcedId: 'sch-north',
  },
  { sourcedId: 's2', enabledUser: 'true', givenName: 'Ben', familyName: 'Okafor', grades: '07' },
  { sourcedId: 'p1', enabledUser: 'true', givenName: 'Grace', familyName: 'Okafor' },
]

const ROLES_12 = [
  { sourcedId: 'r1', userSourcedId: 's1', roleType: 'primary', role: 'student', orgSourcedId: 'sch-north' },
  { sourcedId: 'r2', userSourcedId: 's1', roleType: 'secondary', role: 'student', orgSourcedId: 'sch-south' },
  { sourcedId: 'r3', userSourcedId: 't1', roleType: 'primary', role: 'teacher', orgSourcedId: 'sch-north' },
  { sourcedId: 'r4', userSourcedId: 's2', roleType: 'primary', role: 'student', orgSourcedId: 'sch-south' },
  { sourcedId: 'r5', userSourcedId: 's2', roleType: 'secondary', role: 'student', orgSourcedId: 'district-1' },
]

async function ok(source: string, limits?: Partial<OneRosterLimits>): Promise<OneRosterExport> {
  const result = await readOneRoster(source, limits)
  if (!result.ok) throw new Error(`expected an export, got:\n${result.problems.map(formatImportProblem).join('\n')}`)
  return result
}

async function problems(source: string, limits?: Partial<OneRosterLimits>): Promise<string[]> {
  const result = await readOneRoster(source, limits)
  if (result.ok) throw new Error('expected problems, got an export')
  return result.problems.map(formatImportProblem)
}

describe('OneRoster 1.1 bulk', () => {
  it('keeps the students, their first names and schools, and the schools, from a folder', async () => {
    const result = await ok(writeFolder(bulk11(USERS_11)))
    expect(result).toEqual({
      ok: true,
      version: '1.1',
      mode: { orgs: 'bulk', users: 'bulk', roles: 'absent' },
      source: SOURCE,
      districts: DISTRICTS,
      schools: SCHOOLS,
      students: STUDENTS_11,
      schoolChanges: [],
      maybeStudents: [],
      skipped: { nonStudentUsers: 2, nonStudentRoles: 0, nonSchoolOrgs: 1 },
    })
  })

  it('reads the same export from a .zip file, deflated or stored', async () => {
    const files = bulk11(USERS_11)
    const fromFolder = await ok(writeFolder(files))
    expect(await ok(writeZip(files))).toEqual(fromFolder)
    const stored = Object.entries(files).map(([name, data]) => ({ name, data, method: 'stored' as const }))
    expect(await ok(writeZip(stored))).toEqual(fromFolder)
  })

  it('shares one frozen list among students of the same schools', async () => {
    const users = ['a', 'b'].map((id) => ({
      sourcedId: id,
      role: 'student',
      orgSourcedIds: 'sch-north',
      givenName: 'Ada',
    }))
    const [first, second] = (await ok(writeFolder(bulk11(users)))).students
    expect(first?.status === 'active' && second?.status === 'active').toBe(true)
    if (first?.status !== 'active' || second?.status !== 'active') return
    expect(first.schoolSourcedIds).toBe(second.schoolSourcedIds)
    expect(Object.isFrozen(first.schoolSourcedIds)).toBe(true)
  })

  it('reads columns by name, with a byte order mark and LF line breaks', async () => {
    const header = [...USERS_11_HEADER].reverse()
    const users = `\uFEFF${table(header, USERS_11).replaceAll('\r\n', '\n')}`
    expect((await ok(writeFolder(bulk11([], { 'users.csv': users })))).students).toEqual(STUDENTS_11)
  })
})

describe('OneRoster 1.2 bulk', () => {
  it('takes students and their schools from roles.csv, primary and secondary, and the preferred first name', async () => {
    const result = await ok(writeZip(bulk12(USERS_12, ROLES_12)))
    expect(result).toEqual({
      ok: true,
      version: '1.2',
      mode: { orgs: 'bulk', users: 'bulk', roles: 'bulk' },
      source: SOURCE,
      districts: DISTRICTS,
      schools: SCHOOLS,
      students: [
        { status: 'active', sourcedId: 's1', firstName: 'Alex', schoolSourcedIds: ['sch-north', 'sch-south'], line: 3 },
        { status: 'active', sourcedId: 's2', firstName: 'Ben', schoolSourcedIds: ['sch-south'], line: 4 },
      ],
      schoolChanges: [],
      maybeStudents: [],
      skipped: { nonStudentUsers: 2, nonStudentRoles: 1, nonSchoolOrgs: 1 },
    })
  })

  it('ignores the order of the columns and columns it does not know', async () => {
    const header = ['metadata.district.house', ...[...USERS_12_HEADER].reverse()]
    const users = USERS_12.map((user) => ({ ...user, 'metadata.district.house': 'Gryffindor' }))
    const files = { ...bulk12([], ROLES_12), 'users.csv': table(header, users) }
    expect((await ok(writeFolder(files))).students.map((student) => student.sourcedId)).toEqual(['s1', 's2'])
  })

  it('reports a student role whose user is missing and a student with no school', async () => {
    const roles = [
      ...ROLES_12,
      { sourcedId: 'r6', userSourcedId: 's8', roleType: 'primary', role: 'student', orgSourcedId: 'sch-north' },
      { sourcedId: 'r7', userSourcedId: 'p1', roleType: 'primary', role: 'student', orgSourcedId: 'district-1' },
    ]
    expect(await problems(writeFolder(bulk12(USERS_12, roles)))).toEqual([
      'users.csv:5: sourcedId: the student has no role in roles.csv at an org of type school',
      'roles.csv:7: userSourcedId: names a student whom users.csv does not hold',
    ])
  })
})

describe('OneRoster deltas', () => {
  const orgs = table(ORGS_HEADER, [
    { sourcedId: 'sch-west', status: 'active', dateLastModified: '2026-03-01T00:00:00Z', name: 'West', type: 'school' },
    { sourcedId: 'sch-south', status: 'tobedeleted', dateLastModified: '2026-03-01T00:00:00Z', type: 'school' },
    {
      sourcedId: 'district-2',
      status: 'active',
      dateLastModified: '2026-03-01T00:00:00Z',
      name: 'D2',
      type: 'district',
    },
  ])
  const role = (user: string, org: string, status: string, kind = 'student') => ({
    sourcedId: `r-${user}-${org}`,
    status,
    dateLastModified: '2026-03-01T00:00:00Z',
    userSourcedId: user,
    roleType: 'primary',
    role: kind,
    orgSourcedId: org,
  })
  const user = (sourcedId: string, status: string, givenName = '') => ({
    sourcedId,
    status,
    dateLastModified: '2026-03-01T00:00:00Z',
    givenName,
    familyName: 'Family',
  })

  it('1.2: returns removals, school links and unlinks, and users whose roles the delta does not give', async () => {
    const files = {
      'manifest.csv': manifest('1.2', { orgs: 'delta', users: 'delta', roles: 'delta' }),
      'orgs.csv': orgs,
      'roles.csv': table(ROLES_HEADER, [
        role('s1', 'sch-west', 'active'),
        role('s1', 'sch-south', 'tobedeleted'),
        role('s9', 'sch-east', 'active'),
        role('t1', 'sch-west', 'active', 'teacher'),
        role('s5', 'district-2', 'active'),
        role('s7', 'sch-north', 'tobedeleted'),
      ]),
      'users.csv': table(USERS_12_HEADER, [
        user('s1', 'active', 'Alex'),
        user('s4', 'tobedeleted'),
        user('s5', 'active', 'Cara'),
        user('s6', 'active', 'Dee Dee'),
        user('s7', 'tobedeleted'),
        user('s8', 'active', 'Eve'),
      ]),
    }
    expect(await ok(writeZip(files))).toEqual({
      ok: true,
      version: '1.2',
      mode: { orgs: 'delta', users: 'delta', roles: 'delta' },
      source: SOURCE,
      districts: [{ sourcedId: 'district-2', name: 'D2' }],
      schools: [
        { status: 'active', sourcedId: 'sch-west', name: 'West', identifier: null, district: null, line: 2 },
        { status: 'tobedeleted', sourcedId: 'sch-south', line: 3 },
      ],
      students: [
        { status: 'active', sourcedId: 's1', firstName: 'Alex', schoolSourcedIds: null, line: 2 },
        { status: 'active', sourcedId: 's5', firstName: 'Cara', schoolSourcedIds: null, line: 4 },
        { status: 'tobedeleted', sourcedId: 's7', line: 6 },
      ],
      schoolChanges: [
        { studentSourcedId: 's1', schoolSourcedId: 'sch-west', status: 'active', line: 2 },
        { studentSourcedId: 's1', schoolSourcedId: 'sch-south', status: 'tobedeleted', line: 3 },
        { studentSourcedId: 's9', schoolSourcedId: 'sch-east', status: 'active', line: 4 },
        { studentSourcedId: 's7', schoolSourcedId: 'sch-north', status: 'tobedeleted', line: 7 },
      ],
      maybeStudents: [
        { status: 'tobedeleted', sourcedId: 's4', line: 3 },
        {
          status: 'active',
          sourcedId: 's6',
          firstName: null,
          problem: {
            file: 'users.csv',
            line: 5,
            field: 'givenName',
            message: expect.stringContaining('must be a first name only'),
          },
          line: 5,
        },
        { status: 'active', sourcedId: 's8', firstName: 'Eve', line: 7 },
      ],
      skipped: { nonStudentUsers: 0, nonStudentRoles: 1, nonSchoolOrgs: 1 },
    })
  })

  it('1.1: keeps schools the delta does not list, and removals without their other fields', async () => {
    const files = {
      'manifest.csv': manifest('1.1', { orgs: 'absent', users: 'delta' }),
      'users.csv': table(USERS_11_HEADER, [
        { ...user('s1', 'active', 'Ada'), role: 'student', orgSourcedIds: 'sch-north' },
        { ...user('s2', 'tobedeleted'), role: 'student' },
        { ...user('t1', 'tobedeleted'), role: 'teacher' },
      ]),
    }
    const result = await ok(writeFolder(files))
    expect(result.mode).toEqual({ orgs: 'absent', users: 'delta', roles: 'absent' })
    expect(result.students).toEqual([
      { status: 'active', sourcedId: 's1', firstName: 'Ada', schoolSourcedIds: ['sch-north'], line: 2 },
      { status: 'tobedeleted', sourcedId: 's2', line: 3 },
    ])
    expect(result.skipped.nonStudentUsers).toBe(1)
  })

  it('requires each row of a delta to say active or tobedeleted', async () => {
    const files = {
      'manifest.csv': manifest('1.1', { orgs: 'delta', users: 'delta' }),
      'orgs.csv': table(ORGS_HEADER, [{ sourcedId: 'sch-west', name: 'West', type: 'school' }]),
      'users.csv': table(USERS_11_HEADER, [
        { ...user('s1', 'inactive', 'Ada'), role: 'student', orgSourcedIds: 'sch-west' },
      ]),
    }
    expect(await problems(writeFolder(files))).toEqual([
      'orgs.csv:2: status: must be active or tobedeleted in a delta file',
      'users.csv:2: status: must be active or tobedeleted in a delta file',
    ])
  })
})

describe('problems with an export as a whole', () => {
  it('reports a missing manifest, and an archive of the folder rather than of its files', async () => {
    const files = bulk11(USERS_11)
    const { 'manifest.csv': _, ...withoutManifest } = files
    expect(await problems(writeFolder(withoutManifest))).toEqual([
      'manifest.csv: is missing: a OneRoster CSV export holds a manifest.csv beside its other files',
    ])
    const nested = Object.entries(files).map(([name, data]) => ({ name: `export/${name}`, data }))
    expect(await problems(writeZip(nested))).toEqual([
      'manifest.csv: is inside a folder of the archive, not at its top level: zip the files themselves, not their folder',
    ])
  })

  it('reports versions it does not read and modes that do not fit together', async () => {
    const old = manifest('1.1', { orgs: 'bulk', users: 'bulk' }).replace(
      'oneroster.version,1.1',
      'oneroster.version,1.0',
    )
    expect(await problems(writeFolder(bulk11(USERS_11, { 'manifest.csv': old })))).toEqual([
      'manifest.csv:3: value: oneroster.version must be 1.1 or 1.2',
    ])
    const noUsers = manifest('1.1', { orgs: 'bulk' }).replace(/file\.users,absent\r\n/, '')
    expect(await problems(writeFolder(bulk11(USERS_11, { 'manifest.csv': noUsers })))).toEqual([
      'manifest.csv: lacks the property file.users (bulk, delta or absent)',
    ])
    const deltaOrgs = manifest('1.1', { orgs: 'delta', users: 'bulk' })
    expect(await problems(writeFolder(bulk11(USERS_11, { 'manifest.csv': deltaOrgs })))).toEqual([
      'manifest.csv:13: value: file.orgs must be bulk when file.users is: a full roster needs every school',
    ])
    const rolesDelta = manifest('1.2', { orgs: 'bulk', users: 'bulk', roles: 'delta' })
    expect(await problems(writeFolder({ ...bulk12(USERS_12, ROLES_12), 'manifest.csv': rolesDelta }))).toEqual([
      'manifest.csv:20: value: file.roles and file.users must both be bulk or neither: in 1.2 a student and its schools come in both',
    ])
    const nothing = manifest('1.2', {})
    expect(await problems(writeFolder({ 'manifest.csv': nothing }))).toEqual([
      'manifest.csv: names none of orgs.csv, users.csv, roles.csv as bulk or delta: there is nothing to import',
    ])
  })

  it('reports a file the manifest names that the export lacks', async () => {
    const { 'users.csv': _, ...files } = bulk11(USERS_11)
    expect(await problems(writeZip(files))).toEqual(['users.csv: is missing, and manifest.csv says file.users is bulk'])
  })

  it('reports a path that is neither a folder nor a .zip file', async () => {
    const folder = writeFolder({ 'notes.txt': 'Not a roster: a text file of more than twenty-two bytes.' })
    expect(await problems(`${folder}/notes.txt`)).toEqual([
      'notes.txt: is not a .zip archive (no end of central directory)',
    ])
    expect(await problems(`${folder}/nothing-here`)).toEqual(['nothing-here: cannot be read: no such folder or file'])
  })
})

describe('problems with rows', () => {
  it('reports every bad row with file, line and field, all or nothing', async () => {
    const orgs = table(ORGS_HEADER, [
      { sourcedId: 'sch-north', name: 'North Elementary', type: 'school' },
      { sourcedId: 'sch-north', name: 'North again', type: 'school' },
      { sourcedId: 'sch-east', name: '=HYPERLINK("http://x")', type: 'school', identifier: '@SUM(1)' },
      { sourcedId: '+sch', name: 'Plus', type: 'school' },
      { sourcedId: 'sch-x', name: 'No type' },
    ])
    const student = (sourcedId: string, givenName: string, orgSourcedIds = 'sch-north') => ({
      sourcedId,
      role: 'student',
      givenName,
      orgSourcedIds,
    })
    const users = [
      student('s1', 'Ada'),
      student('s1', 'Ada'),
      student('s2', 'Ada Lovelace'),
      student('s3', 'Ada', 'sch-north,sch-nowhere'),
      student('-s4', 'Ada'),
      student('s5', 'Ada', ''),
      { ...student('s6', 'Ada'), status: 'tobedeleted' },
      student('s7', ''),
      student('s8', '=cmd'),
    ]
    const files = bulk11(users, { 'orgs.csv': orgs })
    files['users.csv'] = `${files['users.csv']}s9,too,few\r\n`
    expect(await problems(writeFolder(files))).toEqual([
      'orgs.csv:3: sourcedId: the same org as on line 2',
      'orgs.csv:4: name: must not start with =, +, - or @, which a spreadsheet would run as a formula',
      'orgs.csv:4: identifier: must not start with =, +, - or @, which a spreadsheet would run as a formula',
      'orgs.csv:5: sourcedId: must not start with =, +, - or @, which a spreadsheet would run as a formula',
      'orgs.csv:6: type: is required (school, district, ...)',
      'users.csv:3: sourcedId: the same student as on line 2',
      'users.csv:4: givenName: must be a first name only: one word of letters, hyphens and apostrophes (write compound names as Anne-Marie); no surname, digits or e-mail address',
      'users.csv:5: orgSourcedIds: names the org "sch-nowhere", which orgs.csv does not hold',
      'users.csv:6: sourcedId: must not start with =, +, - or @, which a spreadsheet would run as a formula',
      "users.csv:7: orgSourcedIds: is required: the student's schools",
      'users.csv:8: status: tobedeleted belongs in a delta file; a bulk file lists only what exists',
      'users.csv:9: givenName: must not be empty or have leading or trailing spaces',
      'users.csv:10: givenName: must be a first name only: one word of letters, hyphens and apostrophes (write compound names as Anne-Marie); no surname, digits or e-mail address',
      'users.csv:11: has 3 fields; the header has 18',
    ])
  })

  it('reports a header without a column it needs, and a bulk export without students', async () => {
    const header = USERS_11_HEADER.filter((column) => column !== 'givenName')
    expect(await problems(writeFolder(bulk11([], { 'users.csv': table(header, USERS_11) })))).toEqual([
      'users.csv:1: the header lacks the column givenName',
    ])
    const teachers = USERS_11.filter((user) => user.role !== 'student')
    expect(await problems(writeFolder(bulk11(teachers)))).toEqual([
      'users.csv: holds no student (no row whose role is student): a bulk export lists every student',
    ])
  })

  it('returns the first problems and counts the rest', async () => {
    const users = Array.from({ length: 12 }, (_, i) => ({
      sourcedId: `s${i}`,
      role: 'student',
      givenName: 'Ada Lovelace',
      orgSourcedIds: 'sch-north',
    }))
    const result = (await readOneRoster(writeFolder(bulk11(users)), { maxProblems: 5 })) as OneRosterFailure
    expect(result.ok).toBe(false)
    expect(result.problems.map((problem) => problem.line)).toEqual([2, 3, 4, 5, 6])
    expect(result.moreProblems).toBe(7)
  })
})
