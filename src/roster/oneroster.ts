/**
 * Reads a OneRoster CSV export, version 1.1 or 1.2, bulk or delta, from a folder or a .zip file,
 * and returns what the service keeps of it, or every problem found. Nothing is written: the
 * import stores the result.
 *
 * Only students are kept, and of each student only the sourcedId (its id in the district's
 * system), the first name (preferredGivenName when given, else givenName, which must pass the
 * project's first-name check) and the schools it belongs to. Schools are the orgs of type
 * school in orgs.csv. A student's schools come from users.csv's orgSourcedIds in 1.1 and from
 * roles.csv's rows with role student (primary and secondary alike) in 1.2. Every other column
 * (family and middle names, e-mail, username, phone, birth dates, demographics) is never kept,
 * never checked and never quoted in a problem, and no other file of the export is read.
 *
 * The files are streamed (orgs, then roles, then users), so memory grows with the students kept
 * and not with the size of the files; see ONEROSTER_LIMITS for the bounds.
 */
import path from 'node:path'
import { firstNameProblem } from '../domain/first-name.js'
import { cell, readTable, type Columns, type TableRow, type TableSpec } from './roster-csv.js'
import { detach, idProblem, labelProblem, StringPool } from './roster-fields.js'
import { openExport, type RosterFile } from './roster-files.js'
import {
  MANIFEST,
  readManifest,
  type FileMode,
  type Manifest,
  type OneRosterVersion,
  type RosterSource,
} from './oneroster-manifest.js'
import { ProblemList, type ImportProblem } from '../imports/problems.js'

export type { FileMode, OneRosterVersion, RosterSource } from './oneroster-manifest.js'
export { formatImportProblem, type ImportProblem } from '../imports/problems.js'

export type RecordStatus = 'active' | 'tobedeleted'

export type RosterSchool =
  | {
      status: 'active'
      sourcedId: string
      name: string
      identifier: string | null
      /** The sourcedId of its parent org when that is a district in this orgs.csv. */
      district: string | null
      line: number
    }
  /** A delta's school to remove: its students are unlinked from it. */
  | { status: 'tobedeleted'; sourcedId: string; line: number }

export type RosterStudent =
  | {
      status: 'active'
      sourcedId: string
      firstName: string
      /**
       * All the student's schools, or null in a 1.2 delta, where roles.csv gives changes to
       * them instead (`schoolChanges`). Lists are shared between students and frozen.
       */
      schoolSourcedIds: readonly string[] | null
      /** The student's line in users.csv. */
      line: number
    }
  /** A delta's student to remove: unlinked from its schools and erased. */
  | { status: 'tobedeleted'; sourcedId: string; line: number }

/** A 1.2 delta's roles.csv row for a student: link it to the school, or unlink it. */
export interface SchoolChange {
  studentSourcedId: string
  schoolSourcedId: string
  status: RecordStatus
  line: number
}

/**
 * A 1.2 delta's users.csv row whose roles the export does not give: a student the service
 * already keeps whose name changed, or a teacher or parent. The import applies it only to
 * students it keeps, and reports `problem` only then.
 */
export type MaybeStudent =
  | { status: 'active'; sourcedId: string; firstName: string; line: number }
  | { status: 'active'; sourcedId: string; firstName: null; problem: ImportProblem; line: number }
  | { status: 'tobedeleted'; sourcedId: string; line: number }

export interface OneRosterExport {
  ok: true
  version: OneRosterVersion
  /** Each file's mode from the manifest; roles is absent in 1.1, which has no roles.csv. */
  mode: { orgs: FileMode; users: FileMode; roles: FileMode }
  /** The system the export came from, as its manifest names it. */
  source: RosterSource
  /** The orgs of type district in orgs.csv. */
  districts: { sourcedId: string; name: string }[]
  schools: RosterSchool[]
  students: RosterStudent[]
  schoolChanges: SchoolChange[]
  maybeStudents: MaybeStudent[]
  /**
   * Rows read and not kept. School ids a student names that this export's orgs.csv lacks (only
   * possible in a delta, which need not list unchanged orgs) are kept as given, for the import
   * to find among the schools it keeps.
   */
  skipped: { nonStudentUsers: number; nonStudentRoles: number; nonSchoolOrgs: number }
}

export interface OneRosterFailure {
  ok: false
  problems: ImportProblem[]
  /** Problems found beyond `maxProblems` and left out. */
  moreProblems: number
}

export interface OneRosterLimits {
  /** Largest CSV file read, in bytes after decompression. */
  maxFileBytes: number
  /** Most data rows in one file. */
  maxRows: number
  /** Most characters in one row. */
  maxRowChars: number
  /** Most orgs in orgs.csv, all of which are held to check students' schools. */
  maxOrgs: number
  /** Most students (in a 1.2 delta: users rows and student roles) held. */
  maxStudents: number
  /** Most entries listed by a .zip file. */
  maxZipEntries: number
  /** Largest compression ratio of a .zip entry over a mebibyte. */
  maxCompressionRatio: number
  /** Most problems returned; the rest are counted. */
  maxProblems: number
}

/** The limits; why each is what it is, with the figures, is in the docs (OneRoster import). */
export const ONEROSTER_LIMITS: Readonly<OneRosterLimits> = Object.freeze({
  maxFileBytes: 512 * 1024 * 1024,
  maxRows: 2_000_000,
  maxRowChars: 1024 * 1024,
  maxOrgs: 100_000,
  maxStudents: 250_000,
  maxZipEntries: 10_000,
  maxCompressionRatio: 200,
  maxProblems: 1_000,
})

const FILES = { orgs: 'orgs.csv', users: 'users.csv', roles: 'roles.csv' } as const
const STUDENT = 'student'

interface Org {
  sourcedId: string
  school: boolean
  district: boolean
  /** parentSourcedId as given, or null. */
  parent: string | null
  line: number
}

/**
 * A 1.2 bulk student while it is read, found in roles.csv first and then in users.csv; it is
 * returned as it is, so that a large roster is never held twice.
 */
interface PendingStudent {
  status: 'active'
  sourcedId: string
  /** Empty until users.csv gives it. */
  firstName: string
  schoolSourcedIds: readonly string[]
  /** Its line in users.csv, or minus its first line in roles.csv until users.csv gives it. */
  line: number
}

const NO_SCHOOLS: readonly string[] = Object.freeze([])

export async function readOneRoster(
  source: string,
  limitsGiven: Partial<OneRosterLimits> = {},
): Promise<OneRosterExport | OneRosterFailure> {
  const limits: OneRosterLimits = { ...ONEROSTER_LIMITS, ...limitsGiven }
  const problems = new ProblemList(limits.maxProblems)
  const fail = (): OneRosterFailure => ({ ok: false, problems: problems.list, moreProblems: problems.more })

  const opened = await openExport(source, [MANIFEST, ...Object.values(FILES)], limits)
  if (!opened.ok) {
    problems.add({ file: path.basename(source), message: opened.message })
    return fail()
  }
  const manifest = await readManifest(opened.file(MANIFEST), problems)
  if (manifest === null || !checkModes(manifest, opened.file, problems)) return fail()
  const reader = new RosterReader(manifest, limits, problems)
  // Orgs first, to check the schools students name; in 1.2 roles before users, to know who is a student.
  for (const name of ['orgs', 'roles', 'users'] as const) {
    const found = opened.file(FILES[name])
    if (manifest.modes[name] === 'absent' || found.kind !== 'present') continue
    if (!(await reader.read(name, found.read()))) return fail()
  }
  const result = reader.finish()
  return problems.count > 0 || result === null ? fail() : result
}

/** Whether the modes make an import the service can apply, and the files they name are there. */
function checkModes(manifest: Manifest, file: (name: string) => RosterFile, problems: ProblemList): boolean {
  const { modes, lines, version } = manifest
  const before = problems.count
  const fileLine = (name: string) => lines[`file.${name}`]
  if (modes.users === 'bulk' && modes.orgs !== 'bulk')
    problems.add({
      file: MANIFEST,
      line: fileLine('orgs'),
      field: 'value',
      message: 'file.orgs must be bulk when file.users is: a full roster needs every school',
    })
  if (version === '1.2' && (modes.users === 'bulk') !== (modes.roles === 'bulk'))
    problems.add({
      file: MANIFEST,
      line: fileLine('roles'),
      field: 'value',
      message: 'file.roles and file.users must both be bulk or neither: in 1.2 a student and its schools come in both',
    })
  if (modes.orgs === 'absent' && modes.users === 'absent' && modes.roles === 'absent')
    problems.add({
      file: MANIFEST,
      message: `names none of ${Object.values(FILES).join(', ')} as bulk or delta: there is nothing to import`,
    })
  for (const name of ['orgs', 'users', 'roles'] as const) {
    const found = file(FILES[name])
    if (modes[name] === 'absent' || found.kind === 'present') continue
    problems.add({
      file: FILES[name],
      message:
        found.kind === 'refused'
          ? found.message
          : (found.message ?? `is missing, and manifest.csv says file.${name} is ${modes[name]}`),
    })
  }
  return problems.count === before
}

class RosterReader {
  readonly #orgs = new Map<string, Org>()
  readonly #schools: RosterSchool[] = []
  readonly #districts: { sourcedId: string; name: string }[] = []
  /** 1.1 and 1.2 delta students by sourcedId, as they are returned. */
  readonly #students = new Map<string, RosterStudent>()
  /** 1.2 bulk students by sourcedId while roles.csv and users.csv are read. */
  readonly #pending = new Map<string, PendingStudent>()
  /** 1.2 delta: users with a student role in this export's roles.csv. */
  readonly #studentRoles = new Set<string>()
  readonly #changes: SchoolChange[] = []
  readonly #maybe = new Map<string, MaybeStudent>()
  readonly #ids = new StringPool()
  readonly #names = new StringPool()
  readonly #schoolLists = new Map<string, readonly string[]>()
  readonly #skipped = { nonStudentUsers: 0, nonStudentRoles: 0, nonSchoolOrgs: 0 }
  /** users.csv rows whose role is student, kept or not. */
  #studentRows = 0

  constructor(
    readonly manifest: Manifest,
    readonly limits: OneRosterLimits,
    readonly problems: ProblemList,
  ) {}

  #mode(file: keyof typeof FILES): FileMode {
    return this.manifest.modes[file]
  }

  #report(file: string, row: TableRow, field: string | undefined, message: string): void {
    this.problems.add(
      field === undefined ? { file, line: row.line, message } : { file, line: row.line, field, message },
    )
  }

  /** The row's status: blank or active in a bulk file, active or tobedeleted in a delta. */
  #status(file: keyof typeof FILES, row: TableRow, index: number): RecordStatus | null {
    const value = cell(row, index).trim()
    if (this.#mode(file) === 'bulk') {
      if (value === '' || value === 'active') return 'active'
      this.#report(
        FILES[file],
        row,
        'status',
        value === 'tobedeleted'
          ? 'tobedeleted belongs in a delta file; a bulk file lists only what exists'
          : 'must be blank or active in a bulk file',
      )
      return null
    }
    if (value === 'active' || value === 'tobedeleted') return value
    this.#report(FILES[file], row, 'status', 'must be active or tobedeleted in a delta file')
    return null
  }

  #tooMany(file: string, row: TableRow, count: number, limit: number, what: string): boolean {
    if (count <= limit) return false
    this.#report(
      file,
      row,
      undefined,
      `brings more than ${limit.toLocaleString('en-US')} ${what}, the most one import reads`,
    )
    return true
  }

  /** The columns read from a file; status is required in a delta, where it says what each row does. */
  #spec<C extends string>(file: keyof typeof FILES, required: readonly C[], optional: readonly C[] = []) {
    const spec: TableSpec<C | 'status'> =
      this.#mode(file) === 'delta'
        ? { required: [...required, 'status'], optional }
        : { required, optional: [...optional, 'status'] }
    return spec
  }

  /** Reads one file of the export; false when it could not be read to its end. */
  read(file: keyof typeof FILES, bytes: AsyncIterable<Uint8Array>): Promise<boolean> {
    const { limits, problems } = this
    if (file === 'orgs') {
      const spec = this.#spec(file, ['sourcedId', 'name', 'type'], ['identifier', 'parentSourcedId'])
      return readTable(FILES.orgs, bytes, spec, limits, problems, (row, columns) => this.#org(row, columns))
    }
    if (file === 'roles') {
      const spec = this.#spec(file, ['userSourcedId', 'role', 'orgSourcedId'])
      return readTable(FILES.roles, bytes, spec, limits, problems, (row, columns) => this.#role(row, columns))
    }
    if (this.manifest.version === '1.1') {
      const spec = this.#spec(file, ['sourcedId', 'role', 'orgSourcedIds', 'givenName'])
      return readTable(FILES.users, bytes, spec, limits, problems, (row, columns) => this.#user11(row, columns))
    }
    const spec = this.#spec(file, ['sourcedId', 'givenName'], ['preferredGivenName'])
    return readTable(FILES.users, bytes, spec, limits, problems, (row, columns) => this.#user12(row, columns))
  }

  #org(
    row: TableRow,
    columns: Columns<'sourcedId' | 'name' | 'type' | 'identifier' | 'parentSourcedId' | 'status'>,
  ): boolean {
    const file = FILES.orgs
    const id = cell(row, columns.sourcedId)
    const idIssue = idProblem(id)
    if (idIssue !== null) this.#report(file, row, 'sourcedId', idIssue)
    const status = this.#status('orgs', row, columns.status)
    const type = cell(row, columns.type).trim()
    if (type === '') this.#report(file, row, 'type', 'is required (school, district, ...)')
    if (idIssue !== null || status === null || type === '') return true
    const first = this.#orgs.get(id)
    if (first !== undefined) {
      this.#report(file, row, 'sourcedId', `the same org as on line ${first.line}`)
      return true
    }
    const parent = cell(row, columns.parentSourcedId).trim()
    const org: Org = {
      sourcedId: this.#ids.get(id),
      school: type === 'school',
      district: type === 'district',
      parent: parent === '' ? null : this.#ids.get(parent),
      line: row.line,
    }
    this.#orgs.set(org.sourcedId, org)
    if (this.#tooMany(file, row, this.#orgs.size, this.limits.maxOrgs, 'orgs')) return false
    if (org.district && status === 'active') {
      const name = cell(row, columns.name).trim()
      this.#districts.push({ sourcedId: org.sourcedId, name: labelProblem(name) === null ? detach(name) : '' })
    }
    if (!org.school) {
      this.#skipped.nonSchoolOrgs++
      return true
    }
    if (status === 'tobedeleted') {
      this.#schools.push({ status, sourcedId: org.sourcedId, line: row.line })
      return true
    }
    const name = cell(row, columns.name).trim()
    const nameIssue = labelProblem(name)
    if (nameIssue !== null) this.#report(file, row, 'name', nameIssue)
    const identifier = cell(row, columns.identifier).trim()
    const identifierIssue = identifier === '' ? null : labelProblem(identifier)
    if (identifierIssue !== null) this.#report(file, row, 'identifier', identifierIssue)
    if (nameIssue === null && identifierIssue === null)
      this.#schools.push({
        status,
        sourcedId: org.sourcedId,
        name: detach(name),
        identifier: identifier === '' ? null : detach(identifier),
        district: null,
        line: row.line,
      })
    return true
  }

  /**
   * The school a student's org reference names: its kept id, null for an org of another type
   * (a district), or undefined after reporting a reference that cannot be followed.
   */
  #school(file: string, row: TableRow, field: string, reference: string): string | null | undefined {
    const org = this.#orgs.get(reference)
    if (org !== undefined) return org.school ? org.sourcedId : null
    const issue = idProblem(reference)
    if (issue !== null) {
      this.#report(file, row, field, `names an org by an id that ${issue}`)
      return undefined
    }
    if (this.#mode('orgs') === 'bulk') {
      this.#report(file, row, field, `names the org ${JSON.stringify(reference)}, which orgs.csv does not hold`)
      return undefined
    }
    // A delta need not list unchanged orgs: the import looks for this one among the schools it keeps.
    return this.#ids.get(reference)
  }

  /** One frozen list per distinct set of schools: most students share theirs with many others. */
  #schoolList(schools: readonly string[]): readonly string[] {
    const key = schools.join('\n')
    let list = this.#schoolLists.get(key)
    if (list === undefined) {
      list = Object.freeze([...schools])
      this.#schoolLists.set(key, list)
    }
    return list
  }

  /** The student's first name in its kept form, or the problem that keeps it out, to report or to defer. */
  #firstName(row: TableRow, columns: Columns<'givenName' | 'preferredGivenName'>): string | ImportProblem {
    const preferred = cell(row, columns.preferredGivenName)
    const field = preferred === '' ? 'givenName' : 'preferredGivenName'
    const name = preferred === '' ? cell(row, columns.givenName) : preferred
    // firstNameProblem's messages describe the rule and never repeat the name.
    const issue = firstNameProblem(name)
    if (issue !== null) return { file: FILES.users, line: row.line, field, message: issue }
    return this.#names.get(name.normalize('NFC'))
  }

  #user11(row: TableRow, columns: Columns<'sourcedId' | 'role' | 'orgSourcedIds' | 'givenName' | 'status'>): boolean {
    const file = FILES.users
    if (cell(row, columns.role).trim() !== STUDENT) {
      this.#skipped.nonStudentUsers++
      return true
    }
    this.#studentRows++
    const id = cell(row, columns.sourcedId)
    const idIssue = idProblem(id)
    if (idIssue !== null) this.#report(file, row, 'sourcedId', idIssue)
    const status = this.#status('users', row, columns.status)
    if (idIssue !== null || status === null) return true
    const first = this.#students.get(id)
    if (first !== undefined) {
      this.#report(file, row, 'sourcedId', `the same student as on line ${first.line}`)
      return true
    }
    const sourcedId = detach(id)
    if (status === 'tobedeleted') {
      this.#students.set(sourcedId, { status, sourcedId, line: row.line })
    } else {
      const firstName = this.#firstName(row, { givenName: columns.givenName, preferredGivenName: -1 })
      if (typeof firstName !== 'string') this.problems.add(firstName)
      const schools: string[] = []
      let unresolved = false
      const references = cell(row, columns.orgSourcedIds)
        .split(',')
        .map((reference) => reference.trim())
        .filter((reference) => reference !== '')
      for (const reference of references) {
        const school = this.#school(file, row, 'orgSourcedIds', reference)
        if (school === undefined) unresolved = true
        else if (school !== null && !schools.includes(school)) schools.push(school)
      }
      if (references.length === 0) this.#report(file, row, 'orgSourcedIds', "is required: the student's schools")
      else if (schools.length === 0 && !unresolved)
        this.#report(file, row, 'orgSourcedIds', 'names no org of type school')
      if (typeof firstName !== 'string' || unresolved || schools.length === 0) return true
      this.#students.set(sourcedId, {
        status,
        sourcedId,
        firstName,
        schoolSourcedIds: this.#schoolList(schools),
        line: row.line,
      })
    }
    return !this.#tooMany(file, row, this.#students.size, this.limits.maxStudents, 'students')
  }

  #role(row: TableRow, columns: Columns<'userSourcedId' | 'role' | 'orgSourcedId' | 'status'>): boolean {
    const file = FILES.roles
    if (cell(row, columns.role).trim() !== STUDENT) {
      this.#skipped.nonStudentRoles++
      return true
    }
    const userId = cell(row, columns.userSourcedId)
    const userIssue = idProblem(userId)
    if (userIssue !== null) this.#report(file, row, 'userSourcedId', userIssue)
    const status = this.#status('roles', row, columns.status)
    const reference = cell(row, columns.orgSourcedId).trim()
    const school = reference === '' ? undefined : this.#school(file, row, 'orgSourcedId', reference)
    if (reference === '') this.#report(file, row, 'orgSourcedId', 'is required')
    if (userIssue !== null || status === null || school === undefined) return true

    if (this.#mode('roles') === 'delta') {
      const studentSourcedId = this.#ids.get(userId)
      this.#studentRoles.add(studentSourcedId)
      if (school !== null) this.#changes.push({ studentSourcedId, schoolSourcedId: school, status, line: row.line })
      return !this.#tooMany(file, row, this.#changes.length, this.limits.maxStudents, 'student roles')
    }
    let student = this.#pending.get(userId)
    if (student === undefined) {
      const sourcedId = detach(userId)
      student = { status: 'active', sourcedId, firstName: '', schoolSourcedIds: NO_SCHOOLS, line: -row.line }
      this.#pending.set(sourcedId, student)
    }
    if (school !== null && !student.schoolSourcedIds.includes(school))
      student.schoolSourcedIds = this.#schoolList([...student.schoolSourcedIds, school])
    return !this.#tooMany(file, row, this.#pending.size, this.limits.maxStudents, 'students')
  }

  #user12(row: TableRow, columns: Columns<'sourcedId' | 'givenName' | 'preferredGivenName' | 'status'>): boolean {
    const file = FILES.users
    const id = cell(row, columns.sourcedId)
    if (this.#mode('users') === 'bulk') {
      const student = this.#pending.get(id)
      if (student === undefined) {
        this.#skipped.nonStudentUsers++
        return true
      }
      if (this.#status('users', row, columns.status) === null) return true
      if (student.line > 0) {
        this.#report(file, row, 'sourcedId', `the same student as on line ${student.line}`)
        return true
      }
      student.line = row.line
      if (student.schoolSourcedIds.length === 0)
        this.#report(file, row, 'sourcedId', 'the student has no role in roles.csv at an org of type school')
      const firstName = this.#firstName(row, columns)
      if (typeof firstName === 'string') student.firstName = firstName
      else this.problems.add(firstName)
      return true
    }

    const isStudent = this.#studentRoles.has(id)
    const idIssue = idProblem(id)
    if (idIssue !== null) {
      // A user whose id the service could not have kept is no student of its own to update.
      if (isStudent) this.#report(file, row, 'sourcedId', idIssue)
      else this.#skipped.nonStudentUsers++
      return true
    }
    const status = this.#status('users', row, columns.status)
    if (status === null) return true
    const first = this.#students.get(id) ?? this.#maybe.get(id)
    if (first !== undefined) {
      this.#report(file, row, 'sourcedId', `the same user as on line ${first.line}`)
      return true
    }
    const sourcedId = detach(id)
    const firstName = status === 'active' ? this.#firstName(row, columns) : null
    if (isStudent) {
      if (firstName === null) this.#students.set(sourcedId, { status: 'tobedeleted', sourcedId, line: row.line })
      else if (typeof firstName !== 'string') this.problems.add(firstName)
      else
        this.#students.set(sourcedId, {
          status: 'active',
          sourcedId,
          firstName,
          schoolSourcedIds: null,
          line: row.line,
        })
    } else {
      this.#maybe.set(
        sourcedId,
        firstName === null
          ? { status: 'tobedeleted', sourcedId, line: row.line }
          : typeof firstName === 'string'
            ? { status: 'active', sourcedId, firstName, line: row.line }
            : { status: 'active', sourcedId, firstName: null, problem: firstName, line: row.line },
      )
    }
    return !this.#tooMany(file, row, this.#students.size + this.#maybe.size, this.limits.maxStudents, 'users')
  }

  /** The export as kept, or null after reporting what no single row shows. */
  finish(): OneRosterExport | null {
    const { modes, version } = this.manifest
    const students: RosterStudent[] = []
    if (this.#pending.size > 0) {
      for (const student of this.#pending.values()) {
        if (student.line < 0)
          this.problems.add({
            file: FILES.roles,
            line: -student.line,
            field: 'userSourcedId',
            message: 'names a student whom users.csv does not hold',
          })
        else students.push(student)
      }
    } else {
      students.push(...this.#students.values())
    }
    if (modes.users === 'bulk' && this.#pending.size === 0 && this.#studentRows === 0)
      this.problems.add({
        file: version === '1.1' ? FILES.users : FILES.roles,
        message: 'holds no student (no row whose role is student): a bulk export lists every student',
      })
    if (this.problems.count > 0) return null
    // A school's district is known once the whole of orgs.csv is: a parent may come after it.
    for (const school of this.#schools) {
      if (school.status !== 'active') continue
      const parent = this.#orgs.get(school.sourcedId)?.parent
      if (parent != null && this.#orgs.get(parent)?.district === true) school.district = parent
    }
    return {
      ok: true,
      version,
      mode: { ...modes },
      source: { ...this.manifest.source },
      districts: this.#districts,
      schools: this.#schools,
      students,
      schoolChanges: this.#changes,
      maybeStudents: [...this.#maybe.values()],
      skipped: { ...this.#skipped },
    }
  }
}
