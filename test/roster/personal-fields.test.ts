/**
 * No personal field other than the first name ever leaves the reader: every personal column of
 * these exports holds a marker, and the marker must appear in no result, no problem, no thrown
 * error and nothing written to stdout or stderr, whether the export is good or full of faults.
 */
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest'
import { readOneRoster } from '../../src/roster/oneroster.js'
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
  writeZip,
} from './roster-export.js'

afterAll(removeTempDirs)

const MARKER = 'Qzmarker'
const KEPT = new Set(['sourcedId', 'status', 'dateLastModified', 'enabledUser', 'role', 'orgSourcedIds'])

/** A user row whose every personal column holds the marker. */
function personal(header: readonly string[], fields: Record<string, string>): Record<string, string> {
  const row: Record<string, string> = {}
  for (const column of header) if (!KEPT.has(column)) row[column] = `${MARKER}-${column}@example.org`
  row.userIds = `{SIS:${MARKER}}`
  row.grades = `${MARKER}`
  row['metadata.extra'] = `${MARKER} extra`
  return { ...row, ...fields }
}

const ORGS = table(ORGS_HEADER, [
  { sourcedId: 'sch-1', name: 'School One', type: 'school' },
  { sourcedId: 'dist-1', name: 'District', type: 'district' },
])
const DEMOGRAPHICS = `sourcedId,status,dateLastModified,birthDate,sex\r\ns1,,,2015-01-01-${MARKER},${MARKER}\r\n`

function users11(rows: readonly Record<string, string>[]): string {
  const header = [...USERS_11_HEADER, `metadata.${MARKER}`, 'metadata.extra']
  return table(
    header,
    rows.map((fields) => personal(header, fields)),
  )
}

function users12(rows: readonly Record<string, string>[]): string {
  const header = [...USERS_12_HEADER, `metadata.${MARKER}`, 'metadata.extra']
  return table(
    header,
    rows.map((fields) => personal(header, fields)),
  )
}

const GOOD_11: Files = {
  'manifest.csv': manifest('1.1', { orgs: 'bulk', users: 'bulk', demographics: 'bulk' }),
  'orgs.csv': ORGS,
  'demographics.csv': DEMOGRAPHICS,
  'users.csv': users11([
    { sourcedId: 's1', role: 'student', orgSourcedIds: 'sch-1', givenName: 'Ada' },
    { sourcedId: 't1', role: 'teacher', orgSourcedIds: 'sch-1' },
    { sourcedId: 'p1', role: 'guardian', orgSourcedIds: 'sch-1' },
  ]),
}

const GOOD_12: Files = {
  'manifest.csv': manifest('1.2', { orgs: 'bulk', users: 'bulk', roles: 'bulk' }),
  'orgs.csv': ORGS,
  'users.csv': users12([
    // givenName holds the marker as a valid first name: the preferred one is kept instead.
    { sourcedId: 's1', givenName: MARKER, preferredGivenName: 'Ada' },
    { sourcedId: 's2', givenName: 'Ben', preferredGivenName: '' },
    { sourcedId: 't1', givenName: MARKER },
  ]),
  'roles.csv': table(ROLES_HEADER, [
    { sourcedId: 'r1', userSourcedId: 's1', roleType: 'primary', role: 'student', orgSourcedId: 'sch-1' },
    { sourcedId: 'r2', userSourcedId: 's2', roleType: 'primary', role: 'student', orgSourcedId: 'sch-1' },
    { sourcedId: 'r3', userSourcedId: 't1', roleType: 'primary', role: 'teacher', orgSourcedId: 'sch-1' },
  ]),
}

/** Every way a student row can be wrong while its personal columns hold the marker. */
const BAD_STUDENTS: Record<string, string>[] = [
  { sourcedId: 's1', givenName: `Ada ${MARKER}` },
  { sourcedId: 's2', givenName: `${MARKER}@example.org` },
  { sourcedId: 's3', givenName: ` ${MARKER}` },
  { sourcedId: 's4', givenName: `${MARKER}${'x'.repeat(40)}` },
  { sourcedId: 's5', givenName: `${MARKER}1` },
  { sourcedId: 's6', givenName: 'Ada', preferredGivenName: `${MARKER} Lovelace` },
  { sourcedId: 's7', givenName: 'Ada', status: MARKER },
  { sourcedId: 's7', givenName: 'Ada' },
]

const BAD_11: Files = {
  ...GOOD_11,
  'users.csv': users11([
    ...BAD_STUDENTS.map((row) => ({ ...row, role: 'student', orgSourcedIds: 'sch-1' })),
    { sourcedId: 's8', role: 'student', orgSourcedIds: `sch-1,dist-1`, givenName: `=${MARKER}` },
    { sourcedId: 's9', role: 'student', orgSourcedIds: 'dist-1', givenName: 'Ada' },
  ]),
}

const BAD_12: Files = {
  ...GOOD_12,
  'users.csv': users12(BAD_STUDENTS),
  'roles.csv': table(
    ROLES_HEADER,
    [...BAD_STUDENTS.map((row) => row.sourcedId), 's9'].map((user) => ({
      sourcedId: `r-${user}`,
      userSourcedId: user,
      roleType: 'primary',
      role: 'student',
      orgSourcedId: 'sch-1',
    })),
  ),
}

const DELTA_12: Files = {
  'manifest.csv': manifest('1.2', { orgs: 'absent', users: 'delta', roles: 'absent' }),
  'users.csv': users12(BAD_STUDENTS.map((row, index) => ({ ...row, sourcedId: `u${index}`, status: 'active' }))),
}

let output: string[] = []
const writes = { stdout: process.stdout.write, stderr: process.stderr.write }

beforeEach(() => {
  output = []
  const capture = (chunk: unknown) => {
    output.push(String(chunk))
    return true
  }
  process.stdout.write = capture as typeof process.stdout.write
  process.stderr.write = capture as typeof process.stderr.write
})

afterEach(() => {
  process.stdout.write = writes.stdout
  process.stderr.write = writes.stderr
})

async function everything(source: string): Promise<{ text: string; ok: boolean }> {
  let text: string
  let ok = false
  try {
    const result = await readOneRoster(source)
    ok = result.ok
    text = JSON.stringify(result)
  } catch (error) {
    text = `${(error as Error).stack}`
  }
  return { text: `${text}\n${output.join('')}`, ok }
}

describe('personal fields', () => {
  for (const [name, files, expectOk] of [
    ['1.1 bulk', GOOD_11, true],
    ['1.2 bulk', GOOD_12, true],
    ['1.1 bulk with every kind of bad row', BAD_11, false],
    ['1.2 bulk with every kind of bad row', BAD_12, false],
    // Users whose roles a delta does not give carry their problems for the import to report.
    ['1.2 delta of users whose roles it does not give', DELTA_12, true],
  ] as const) {
    it(`are in no result, problem, error or output: ${name}`, async () => {
      for (const source of [writeFolder(files), writeZip(files)]) {
        const { text, ok } = await everything(source)
        expect(ok).toBe(expectOk)
        // The fixture is live: the result says something, and the marker is in the files read.
        expect(text.length).toBeGreaterThan(100)
        expect(Object.values(files).some((content) => String(content).includes(MARKER))).toBe(true)
        expect(text).not.toContain(MARKER)
        expect(text.toLowerCase()).not.toContain(MARKER.toLowerCase())
      }
    })
  }

  it('the bad exports fail on the rows that hold the marker', async () => {
    const result = await readOneRoster(writeFolder(BAD_11))
    expect(result.ok).toBe(false)
    if (result.ok) return
    expect(result.problems.map((problem) => `${problem.line} ${problem.field}`)).toEqual([
      '2 givenName',
      '3 givenName',
      '4 givenName',
      '5 givenName',
      '6 givenName',
      '8 status',
      '10 givenName',
      '11 orgSourcedIds',
    ])
  })
})
