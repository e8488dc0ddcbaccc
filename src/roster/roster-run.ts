/**
 * One pass of a roster import over the stored data, either counting what it would change (a
 * preview) or changing it, in the caller's transaction or batch by batch (roster-import.ts).
 *
 * Order of the writes, for PostgreSQL: schools, then the erasure's rows, then every student row
 * (new students, new first names), and only then attendance, links and the change log, batch by
 * batch. An enroll holds its student's row until it has numbered its change, and numbering holds
 * the change counter to the commit (student-change-log.ts): once this import has numbered a
 * change it writes no student row an enroll could hold, so neither waits for the other in a
 * circle. Students are read and written in batches (roster-batches.ts), so that memory holds one
 * batch beside the export and a server keeps answering meanwhile.
 */
import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import { isoAt } from '../clock.js'
import type { NewStudentChange } from '../domain/student-change.js'
import { TIER_IDS, type TierId } from '../domain/tiers.js'
import {
  type Attended,
  insertSchool,
  insertStudents,
  type NewRosterStudent,
  ROSTER_CHUNK,
  renameStudent,
  rosterStudentsAfter,
  type StoredRosterSchool,
  schoolsByExternalId,
  schoolsOfStudents,
  studentsByExternalId,
  studentsOfSchool,
  updateSchool,
} from '../storage/roster-repository.js'
import { type Attendance, changeAttendance } from '../storage/school-shares.js'
import { recordStudentChanges } from '../storage/student-change-log.js'
import { eraseStudentRows, type PendingErasure, recordErasureNotices } from '../storage/student-removal.js'
import type { Database } from '../storage/tables.js'
import { announceStudentChanges } from '../storage/webhook-repository.js'
import { ONEROSTER_LIMITS, type MaybeStudent, type OneRosterExport, type RosterStudent } from './oneroster.js'
import { RosterBatches } from './roster-batches.js'
import { emptyCounts, type RosterImportOptions, type Touched } from './roster-counts.js'
import { ErasureNotConfirmed, RosterImportRefused } from './roster-import-errors.js'
import { ProblemList } from './roster-problems.js'

/** Students erased per batch: each deletes their progress and change-log rows too. */
const ERASE_BATCH = 100
const USERS = 'users.csv'
const ROLES = 'roles.csv'

type ActiveStudent = Extract<RosterStudent, { status: 'active' }>
type ActiveMaybe = Extract<MaybeStudent, { status: 'active' }>
/** A 1.2 delta's role change for one student. */
type SchoolChangeOf = { school: string; status: 'active' | 'tobedeleted'; line: number }

/** An export student, or the sourcedId of one a 1.2 delta's roles name without a users.csv row. */
const idOf = (entry: ActiveStudent | string): string => (typeof entry === 'string' ? entry : entry.sourcedId)

function* chunks<T>(items: readonly T[]): Generator<T[]> {
  for (let i = 0; i < items.length; i += ROSTER_CHUNK) yield items.slice(i, i + ROSTER_CHUNK)
}

export class RosterRun {
  readonly problems = new ProblemList(ONEROSTER_LIMITS.maxProblems)
  readonly counts = emptyCounts()
  readonly tier: TierId
  readonly at: string
  linksMade = 0
  linksEnded = 0
  webhooks = 0
  /** Ids of the students erased. */
  erased: string[] = []
  #schools = new Map<string, StoredRosterSchool>()
  readonly #exportSchools = new Set<string>()
  readonly #leavingSchools: string[] = []
  /** Ids of the students this delta erases. */
  readonly #erasing = new Set<string>()
  /** Export students (by sourcedId) whose first name changes: counted as changed in the attendance pass. */
  readonly #renamed = new Set<string>()
  #pending: PendingErasure | undefined
  /** Collected by a preview, for the import that follows it. */
  readonly touched: Touched = { students: new Set(), absent: new Set() }

  readonly #batches: RosterBatches

  /**
   * `root` is the caller's transaction, or with `batches` the database, each batch of students
   * then being a transaction of its own (roster-import.ts says when). With `only`, the students
   * gone through are those a preview found to change, and no others.
   */
  constructor(
    readonly root: Kysely<Database>,
    readonly roster: OneRosterExport,
    readonly options: RosterImportOptions,
    readonly write: boolean,
    readonly only?: Touched,
    readonly batches = false,
  ) {
    this.tier = options.tier ?? TIER_IDS[0]
    this.at = isoAt(options.now)
    this.#batches = new RosterBatches(root, write && batches, options.pause)
  }

  /** Where the current batch reads and writes. */
  get db(): Kysely<Database> {
    return this.#batches.db
  }

  #slices<T>(items: readonly T[]): Generator<T[]> {
    return this.#batches.slices(items)
  }

  #unit(work: () => Promise<void>): Promise<void> {
    return this.#batches.unit(work)
  }

  async walk(): Promise<void> {
    await this.#schoolsPass()
    await this.#removals()
    if (this.write && this.batches) await this.#rowsWithAttendance()
    else {
      await this.#studentRows()
      this.#stopOnProblems()
      await this.#attendance()
      this.#stopOnProblems()
    }
    if (this.roster.mode.users === 'bulk') await this.#noLongerPresent()
    for (const schoolId of this.#leavingSchools) await this.#leaveSchool(schoolId)
  }

  /** Numbers the erasure's notices: the last write of the transaction. */
  async numberNotices(): Promise<void> {
    if (this.#pending !== undefined) await recordErasureNotices(this.db, this.#pending)
  }

  #stopOnProblems(): void {
    if (this.write && this.problems.count > 0) throw new RosterImportRefused(this.problems.list, this.problems.more)
  }

  #knownSchool(sourcedId: string): boolean {
    return this.#schools.has(sourcedId) || this.#exportSchools.has(sourcedId)
  }

  #schoolsPass(): Promise<void> {
    return this.#unit(() => this.#schoolRows())
  }

  async #schoolRows(): Promise<void> {
    this.#schools = await schoolsByExternalId(this.db)
    const counts = this.counts.schools
    for (const school of this.roster.schools) {
      const stored = this.#schools.get(school.sourcedId)
      if (school.status === 'tobedeleted') {
        if (stored !== undefined) {
          counts.leaving++
          this.#leavingSchools.push(stored.id)
        }
        continue
      }
      this.#exportSchools.add(school.sourcedId)
      const kept = { name: school.name, identifier: school.identifier }
      if (stored === undefined) {
        counts.new++
        if (this.write) {
          const id = await insertSchool(this.db, { externalId: school.sourcedId, ...kept }, this.at)
          this.#schools.set(school.sourcedId, { id, ...kept })
        }
      } else if (stored.name !== kept.name || stored.identifier !== kept.identifier) {
        counts.changed++
        if (this.write) await updateSchool(this.db, stored.id, kept)
      } else counts.unchanged++
    }
  }

  /** A delta's tobedeleted students and users: those the service keeps are erased. */
  async #removals(): Promise<void> {
    const removed = [
      ...this.roster.students.filter((s) => s.status === 'tobedeleted'),
      ...this.roster.maybeStudents.filter((s) => s.status === 'tobedeleted'),
    ]
    const ids: string[] = []
    for (const part of chunks(removed)) {
      const stored = await studentsByExternalId(
        this.db,
        part.map((s) => s.sourcedId),
      )
      for (const entry of part) {
        const found = stored.get(entry.sourcedId)
        if (found === undefined) this.counts.students.removalsNotKept++
        else if (found.sandbox) this.#sandboxProblem(entry.line)
        else {
          ids.push(found.id)
          this.#erasing.add(found.id)
        }
      }
    }
    this.counts.students.toErase = ids.length
    if (!this.write || ids.length === 0) return
    this.#stopOnProblems()
    if (this.options.confirmErase !== true) throw new ErasureNotConfirmed(ids.length)
    if (!this.batches) {
      this.#pending = await eraseStudentRows(this.db, ids, this.options.now)
      this.erased = this.#pending.outcome.erased.map((student) => student.id)
      this.webhooks += this.#pending.outcome.webhooks
      return
    }
    for (let from = 0; from < ids.length; from += ERASE_BATCH)
      await this.#unit(async () => {
        const erasure = await eraseStudentRows(this.db, ids.slice(from, from + ERASE_BATCH), this.options.now)
        await recordErasureNotices(this.db, erasure)
        this.erased.push(...erasure.outcome.erased.map((student) => student.id))
        this.webhooks += erasure.outcome.webhooks
      })
  }

  #sandboxProblem(line: number): void {
    this.problems.add({
      file: USERS,
      line,
      field: 'sourcedId',
      message: 'is the external id of a sandbox (synthetic) student; imports never change sandbox students',
    })
  }

  /** The export's students and users whose rows an import writes (with `only`, those a preview found to change). */
  #rowEntries(): (ActiveStudent | ActiveMaybe)[] {
    return [
      ...this.roster.students.filter((s): s is ActiveStudent => s.status === 'active'),
      ...this.roster.maybeStudents.filter((s): s is ActiveMaybe => s.status === 'active'),
    ].filter((s) => this.only === undefined || this.only.students.has(s.sourcedId))
  }

  /** New students and new first names: every student row this import writes, before any change is numbered. */
  async #studentRows(): Promise<void> {
    const entries = this.#rowEntries()
    let done = 0
    for (const part of this.#slices(entries)) {
      await this.#unit(() => this.#rowsOf(part))
      this.options.progress?.('students', (done += part.length), entries.length)
    }
  }

  /** One batch of student rows. */
  async #rowsOf(part: readonly (ActiveStudent | ActiveMaybe)[]): Promise<void> {
    const counts = this.counts.students
    const stored = await studentsByExternalId(
      this.db,
      part.map((s) => s.sourcedId),
    )
    const added: NewRosterStudent[] = []
    for (const entry of part) {
      const found = stored.get(entry.sourcedId)
      const maybe = !('schoolSourcedIds' in entry)
      if (maybe) {
        // A user without a student role here: only a student the service keeps is concerned.
        if (found === undefined) continue
        if (found.sandbox) this.#sandboxProblem(entry.line)
        else if ('problem' in entry) this.problems.add(entry.problem)
        else if (entry.firstName !== found.firstName) {
          this.#touch(entry.sourcedId)
          counts.renamed++
          counts.changed++
          if (this.write) await renameStudent(this.db, found.id, entry.firstName as string)
        } else counts.unchanged++
        continue
      }
      const student = entry as ActiveStudent
      for (const school of student.schoolSourcedIds ?? [])
        if (!this.#knownSchool(school)) this.#unknownSchool(USERS, student.line, 'orgSourcedIds', school)
      if (found?.sandbox === true) this.#sandboxProblem(student.line)
      else if (found === undefined) {
        counts.new++
        this.#touch(student.sourcedId)
        added.push({
          id: randomUUID(),
          externalId: student.sourcedId,
          firstName: student.firstName,
          tier: this.tier,
        })
      } else if (found.firstName !== student.firstName) {
        this.#renamed.add(student.sourcedId)
        this.#touch(student.sourcedId)
        counts.renamed++
        if (this.write) await renameStudent(this.db, found.id, student.firstName)
      }
    }
    if (this.write && this.problems.count === 0) await insertStudents(this.db, added, this.at)
  }

  /** A preview notes the students it found to change, for the import that follows it. */
  #touch(sourcedId: string): void {
    if (!this.write) this.touched.students.add(sourcedId)
  }

  #unknownSchool(file: string, line: number, field: string, school: string): void {
    this.problems.add({
      file,
      line,
      field,
      message: `names the school ${JSON.stringify(school)}, which neither this export's orgs.csv nor the service holds`,
    })
  }

  /**
   * The students whose schools an import compares: the export's, then those a 1.2 delta's roles
   * name without a users.csv row; and the delta's role changes by student.
   */
  #attendanceEntries(): { entries: (ActiveStudent | string)[]; changes: Map<string, SchoolChangeOf[]> } {
    const changes = new Map<string, SchoolChangeOf[]>()
    for (const change of this.roster.schoolChanges) {
      if (!this.#knownSchool(change.schoolSourcedId))
        this.#unknownSchool(ROLES, change.line, 'orgSourcedId', change.schoolSourcedId)
      const list = changes.get(change.studentSourcedId) ?? []
      list.push({ school: change.schoolSourcedId, status: change.status, line: change.line })
      changes.set(change.studentSourcedId, list)
    }
    // The export's students, then the students a 1.2 delta's roles name without a users.csv row.
    const inExport = changes.size === 0 ? undefined : new Set(this.roster.students.map((s) => s.sourcedId))
    const entries: (ActiveStudent | string)[] = [
      ...this.roster.students.filter((s): s is ActiveStudent => s.status === 'active'),
      ...[...changes.keys()].filter((id) => !inExport!.has(id)),
    ].filter((entry) => this.only === undefined || this.only.students.has(idOf(entry)))
    return { entries, changes }
  }

  /** Each export student's schools against those it attends: joins and leaves, batch by batch. */
  async #attendance(): Promise<void> {
    const { entries, changes } = this.#attendanceEntries()
    let done = 0
    for (const slice of this.#slices(entries)) {
      await this.#unit(() => this.#attendanceOf(slice, changes))
      this.options.progress?.('attendance', (done += slice.length), entries.length)
    }
  }

  /**
   * Importing in batches: each batch's student rows and then their attendance in one transaction,
   * half as many transactions as two passes; the users without a role in this export afterwards.
   */
  async #rowsWithAttendance(): Promise<void> {
    const { entries, changes } = this.#attendanceEntries()
    let done = 0
    for (const slice of this.#slices(entries)) {
      await this.#unit(async () => {
        await this.#rowsOf(slice.filter((entry): entry is ActiveStudent => typeof entry !== 'string'))
        this.#stopOnProblems()
        await this.#attendanceOf(slice, changes)
        this.#stopOnProblems()
      })
      this.options.progress?.('students', (done += slice.length), entries.length)
    }
    const others = this.#rowEntries().filter((entry) => !('schoolSourcedIds' in entry))
    for (const part of this.#slices(others)) await this.#unit(() => this.#rowsOf(part))
  }

  /** One batch of students' attendance. */
  async #attendanceOf(slice: readonly (ActiveStudent | string)[], changes: Map<string, SchoolChangeOf[]>) {
    const part = slice.map(idOf)
    const stored = await studentsByExternalId(this.db, part)
    const attended = await schoolsOfStudents(
      this.db,
      [...stored.values()].map((s) => s.id),
    )
    const joined: Attendance[] = []
    const left: Attendance[] = []
    const created: string[] = []
    for (const entry of slice) {
      const sourcedId = idOf(entry)
      const student = typeof entry === 'string' ? undefined : entry
      const found = stored.get(sourcedId)
      const own = changes.get(sourcedId)
      if (found?.sandbox === true || (found !== undefined && this.#erasing.has(found.id))) continue
      if (found === undefined && student === undefined) {
        this.problems.add({
          file: ROLES,
          line: own![0]!.line,
          field: 'userSourcedId',
          message: 'names a student whom neither users.csv nor the service holds',
        })
        continue
      }
      const isNew = found === undefined || (found.createdAt === this.at && this.write)
      const have = new Map<string, string>()
      for (const school of attended.get(found?.id ?? '') ?? [])
        if (school.externalId !== null) have.set(school.externalId, school.schoolId)
      const joins: string[] = []
      const leaves: string[] = []
      if (student?.schoolSourcedIds != null) {
        for (const school of student.schoolSourcedIds) if (!have.has(school)) joins.push(school)
        for (const school of have.keys()) if (!student.schoolSourcedIds.includes(school)) leaves.push(school)
      }
      for (const change of own ?? []) {
        if (change.status === 'active' && !have.has(change.school) && !joins.includes(change.school))
          joins.push(change.school)
        if (change.status === 'tobedeleted' && have.has(change.school)) leaves.push(change.school)
      }
      this.counts.attendance.joining += joins.length
      this.counts.attendance.leaving += leaves.length
      if (isNew) {
        if (found !== undefined) created.push(found.id)
      } else if (joins.length + leaves.length > 0 || this.#renamed.has(sourcedId)) {
        this.#touch(sourcedId)
        this.counts.students.changed++
        if (joins.length + leaves.length > 0) this.counts.students.changedSchools++
      } else this.counts.students.unchanged++
      if (found === undefined || !this.write) continue
      for (const school of joins) {
        const id = this.#schools.get(school)?.id
        if (id !== undefined) joined.push({ studentId: found.id, schoolId: id })
      }
      for (const school of leaves) left.push({ studentId: found.id, schoolId: have.get(school)! })
    }
    if (this.write && this.problems.count === 0) await this.#applyAttendance(joined, left, created)
  }

  /** One batch's attendance, then the new students' tier in the change log (and to partners now linked). */
  async #applyAttendance(joined: Attendance[], left: Attendance[], created: string[]): Promise<void> {
    const outcome = await changeAttendance(this.db, { joined, left }, this.options.now)
    this.linksMade += outcome.linked.length
    this.linksEnded += outcome.unlinked.length
    this.webhooks += outcome.webhooks
    const tiers: NewStudentChange[] = created.map((studentId) => ({
      type: 'tier_changed',
      studentId,
      tier: this.tier,
      changedAt: this.at,
    }))
    const linked = new Set(outcome.linked.map((link) => link.studentId))
    await announceStudentChanges(
      this.db,
      tiers.filter((change) => linked.has(change.studentId)),
      this.options.now,
    )
    await recordStudentChanges(this.db, tiers)
  }

  /** Bulk users file: kept students it lacks leave every school they attend, and stay. */
  async #noLongerPresent(): Promise<void> {
    if (this.only !== undefined) {
      for (const part of this.#slices([...this.only.absent])) await this.#leaveAll(part)
      return
    }
    const listed = new Set(this.roster.students.map((s) => s.sourcedId))
    let after: string | undefined
    for (;;) {
      const page = await rosterStudentsAfter(this.db, after, ROSTER_CHUNK)
      if (page.length === 0) return
      after = page.at(-1)!.id
      const missing = page.filter((s) => !listed.has(s.externalId))
      this.counts.students.noLongerPresent += missing.length
      await this.#leaveAll(missing.map((s) => s.id))
    }
  }

  /** Students a bulk file lacks leave every school they attend. */
  #leaveAll(studentIds: string[]): Promise<void> {
    return this.#unit(async () => {
      const attended = await schoolsOfStudents(this.db, studentIds)
      this.counts.students.leavingAllSchools += attended.size
      if (!this.write) for (const id of attended.keys()) this.touched.absent.add(id)
      await this.#leave(
        [...attended].flatMap(([studentId, schools]) =>
          schools.map((s: Attended) => ({ studentId, schoolId: s.schoolId })),
        ),
      )
    })
  }

  /** A delta's tobedeleted school: its students leave it; the school stays. */
  async #leaveSchool(schoolId: string): Promise<void> {
    let after: string | undefined
    for (let done = false; !done; )
      await this.#unit(async () => {
        const students = await studentsOfSchool(this.db, schoolId, after, ROSTER_CHUNK)
        done = students.length === 0
        after = students.at(-1)
        await this.#leave(students.filter((id) => !this.#erasing.has(id)).map((studentId) => ({ studentId, schoolId })))
      })
  }

  async #leave(left: Attendance[]): Promise<void> {
    this.counts.attendance.leaving += left.length
    if (this.write && left.length > 0) await this.#applyAttendance([], left, [])
  }
}
