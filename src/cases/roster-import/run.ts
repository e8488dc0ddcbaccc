/**
 * One pass of a roster import over the stored data, either counting what it would change (a
 * preview) or changing it, in the caller's transaction or batch by batch (import.ts).
 *
 * Order of the writes, for PostgreSQL: schools, then the erasure's rows, then every student row
 * (new students, new first names), and only then attendance, links and the change log, batch by
 * batch. An enroll holds its student's row until it has numbered its change, and numbering holds
 * the change counter to the commit (student-change-log.ts): once this import has numbered a
 * change it writes no student row an enroll could hold, so neither waits for the other in a
 * circle. Students are read and written in batches (imports/import-batches.ts), so that memory holds one
 * batch beside the export and a server keeps answering meanwhile.
 */
import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import { eraseStudentRows, type PendingErasure, recordErasureNotices } from '../erasure.js'
import { changeAttendance } from '../school-attendance.js'
import { isoAt } from '../../clock.js'
import type { NewStudentChange } from '../../domain/student-change.js'
import { TIER_IDS, type TierId } from '../../domain/tiers.js'
import { linksEndedBy } from '../../storage/links-ending-repository.js'
import {
  type Attended,
  claimStudents,
  insertSchool,
  insertStudents,
  type NewRosterStudent,
  ROSTER_CHUNK,
  renameStudent,
  rosterStudentsAfter,
  type StoredRosterSchool,
  type StoredRosterStudent,
  schoolsByExternalId,
  schoolsOfStudents,
  studentsByExternalId,
  studentsOfSchool,
  updateSchool,
} from '../../storage/roster-repository.js'
import type { Attendance, Link } from '../../storage/school-share-repository.js'
import { recordStudentChanges } from '../../storage/student-change-log.js'
import type { Database } from '../../storage/tables.js'
import { announceStudentChanges } from '../../storage/webhook-repository.js'
import {
  ONEROSTER_LIMITS,
  type MaybeStudent,
  type OneRosterExport,
  type RosterStudent,
} from '../../roster/oneroster.js'
import { emptyCounts, type RosterImportOptions, type SchoolCoverage, type Touched } from './counts.js'
import { ErasureNotConfirmed, RosterImportRefused } from './errors.js'
import { ImportBatches } from '../../imports/import-batches.js'
import { ProblemList } from '../../imports/problems.js'
import { WriteBatchSize } from '../../imports/write-batch-size.js'

/** Students erased per batch: each deletes their progress and change-log rows too. */
const ERASE_BATCH = 100
/** Students in the first batch that commits on its own, and the fewest in any. */
const FIRST_BATCH = 200
const MIN_BATCH = 25
const USERS = 'users.csv'
const ROLES = 'roles.csv'
const ORGS = 'orgs.csv'

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
  /**
   * The source system the export speaks for: its manifest's `source.systemCode`, else
   * `source.systemName`; null when it names neither.
   */
  readonly source: string | null
  /** Links to partner organisations ended (or, in a preview, that would end), by organisation id. */
  readonly linksEndedByOrganisation = new Map<string, number>()
  /** The schools the export speaks for, by sourcedId, with who joins and leaves each. */
  readonly #coverage = new Map<string, SchoolCoverage>()
  #schools = new Map<string, StoredRosterSchool>()
  readonly #exportSchools = new Set<string>()
  /** Bulk users file: the schools its students attend; a school it lists without students is left alone. */
  readonly #attended = new Set<string>()
  readonly #leavingSchools: string[] = []
  /** Ids of the students this delta erases. */
  readonly #erasing = new Set<string>()
  /** Export students (by sourcedId) whose first name changes: counted as changed in the attendance pass. */
  readonly #renamed = new Set<string>()
  #pending: PendingErasure | undefined
  /** Collected by a preview, for the import that follows it. */
  readonly touched: Touched = { students: new Set(), absent: new Set() }

  readonly #batches: ImportBatches

  /**
   * `root` is the caller's transaction, or with `batches` the database, each batch of students
   * then being a transaction of its own (import.ts says when). With `only`, the students
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
    this.source = roster.source.systemCode ?? roster.source.systemName ?? null
    const size = new WriteBatchSize({ first: FIRST_BATCH, min: MIN_BATCH, max: ROSTER_CHUNK })
    this.#batches = new ImportBatches(root, write && batches, size, options.pause)
  }

  /** Where the current batch reads and writes. */
  get db(): Kysely<Database> {
    return this.#batches.db
  }

  /** `items` a batch at a time: ROSTER_CHUNK, or the current size when batches commit on their own. */
  *#slices<T>(items: readonly T[]): Generator<T[]> {
    for (let from = 0; from < items.length; ) {
      const size = this.#batches.own ? this.#batches.size!.rows : ROSTER_CHUNK
      yield items.slice(from, from + size)
      from += size
    }
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

  /** A school another source system keeps: no export of this source may change it or its students' place in it. */
  #foreign(school: StoredRosterSchool | undefined): boolean {
    return school?.source != null && this.source !== null && school.source !== this.source
  }

  /**
   * Whether this export speaks for the school: a bulk users file for the schools it lists that its
   * students attend (a region's export may list every school of its district), a delta for those
   * it lists and those its own source keeps.
   */
  #inScope(sourcedId: string): boolean {
    if (this.roster.mode.users === 'bulk') return this.#exportSchools.has(sourcedId) && this.#attended.has(sourcedId)
    if (this.#exportSchools.has(sourcedId)) return true
    if (this.roster.mode.orgs === 'bulk') return false
    const stored = this.#schools.get(sourcedId)
    return stored !== undefined && stored.source === this.source
  }

  /** The school's line in the preview, made when first needed. */
  #covered(sourcedId: string): SchoolCoverage {
    let line = this.#coverage.get(sourcedId)
    if (line === undefined) {
      line = {
        sourcedId,
        name: this.#schools.get(sourcedId)?.name ?? sourcedId,
        joining: 0,
        leaving: 0,
        removed: false,
        withoutStudents: false,
      }
      this.#coverage.set(sourcedId, line)
    }
    return line
  }

  /** The schools this export speaks for, in the export's order, with who joins and leaves each. */
  coverage(): SchoolCoverage[] {
    return [...this.#coverage.values()]
  }

  #foreignProblem(file: string, line: number, field: string, school: StoredRosterSchool, sourcedId: string): void {
    this.problems.add({
      file,
      line,
      field,
      message:
        `names the school ${JSON.stringify(sourcedId)}, which the service keeps from the source system ` +
        `${JSON.stringify(school.source)}, not this export's ${JSON.stringify(this.source)}: an export changes only ` +
        "its own source's schools and their students (docs/rosters.md, several districts)",
    })
  }

  #schoolsPass(): Promise<void> {
    return this.#unit(() => this.#schoolRows())
  }

  async #schoolRows(): Promise<void> {
    this.#schools = await schoolsByExternalId(this.db)
    if (this.roster.mode.users === 'bulk')
      for (const student of this.roster.students)
        if (student.status === 'active') for (const school of student.schoolSourcedIds ?? []) this.#attended.add(school)
    const counts = this.counts.schools
    for (const school of this.roster.schools) {
      const stored = this.#schools.get(school.sourcedId)
      if (this.#foreign(stored)) {
        this.#foreignProblem(ORGS, school.line, 'sourcedId', stored!, school.sourcedId)
        continue
      }
      if (school.status === 'tobedeleted') {
        if (stored !== undefined) {
          counts.leaving++
          this.#covered(school.sourcedId).removed = true
          this.#leavingSchools.push(school.sourcedId)
        }
        continue
      }
      this.#exportSchools.add(school.sourcedId)
      const line = this.#covered(school.sourcedId)
      line.name = school.name
      line.withoutStudents = this.roster.mode.users === 'bulk' && !this.#attended.has(school.sourcedId)
      // The first export of a known source to list a school claims it; its district follows the file.
      const kept = {
        name: school.name,
        identifier: school.identifier,
        source: this.source ?? stored?.source ?? null,
        district: school.district ?? stored?.district ?? null,
      }
      if (stored === undefined) {
        counts.new++
        if (this.write) {
          const id = await insertSchool(this.db, { externalId: school.sourcedId, ...kept }, this.at)
          this.#schools.set(school.sourcedId, { id, ...kept })
        }
        continue
      }
      if (stored.name !== kept.name || stored.identifier !== kept.identifier) counts.changed++
      else counts.unchanged++
      const same = (Object.keys(kept) as (keyof typeof kept)[]).every((field) => stored[field] === kept[field])
      if (this.write && !same) {
        await updateSchool(this.db, stored.id, kept)
        this.#schools.set(school.sourcedId, { id: stored.id, ...kept })
      }
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
        else if (this.#otherSource(found)) counts.unchanged++
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
        this.#checkSchool(USERS, student.line, 'orgSourcedIds', school)
      if (found?.sandbox === true) this.#sandboxProblem(student.line)
      else if (found === undefined) {
        counts.new++
        this.#touch(student.sourcedId)
        added.push({
          id: randomUUID(),
          externalId: student.sourcedId,
          firstName: student.firstName,
          tier: this.tier,
          source: this.source,
        })
      } else if (this.#otherSource(found)) {
        counts.keptByAnotherSource++
      } else if (found.firstName !== student.firstName) {
        this.#renamed.add(student.sourcedId)
        this.#touch(student.sourcedId)
        counts.renamed++
        if (this.write) await renameStudent(this.db, found.id, student.firstName)
      }
    }
    if (this.write && this.problems.count === 0) await insertStudents(this.db, added, this.at)
  }

  /**
   * A student another source system listed first (a transfer, or a child at schools of two
   * districts): its first name follows that source, so two districts' imports never rename it
   * back and forth.
   */
  #otherSource(found: StoredRosterStudent): boolean {
    return found.source !== null && this.source !== null && found.source !== this.source
  }

  /** A preview notes the students it found to change, for the import that follows it. */
  #touch(sourcedId: string): void {
    if (!this.write) this.touched.students.add(sourcedId)
  }

  /** A school a student row names must be one this export may change. */
  #checkSchool(file: string, line: number, field: string, school: string): void {
    const stored = this.#schools.get(school)
    if (!this.#knownSchool(school)) this.#unknownSchool(file, line, field, school)
    else if (!this.#exportSchools.has(school) && this.#foreign(stored))
      this.#foreignProblem(file, line, field, stored!, school)
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
      this.#checkSchool(ROLES, change.line, 'orgSourcedId', change.schoolSourcedId)
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
    const claimed: string[] = []
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
      // Only the schools this export speaks for: a student another district's school also lists keeps it.
      if (student?.schoolSourcedIds != null) {
        for (const school of student.schoolSourcedIds) if (!have.has(school)) joins.push(school)
        for (const school of have.keys())
          if (!student.schoolSourcedIds.includes(school) && this.#inScope(school)) leaves.push(school)
      }
      for (const change of own ?? []) {
        if (change.status === 'active' && !have.has(change.school) && !joins.includes(change.school))
          joins.push(change.school)
        if (change.status === 'tobedeleted' && have.has(change.school) && this.#inScope(change.school))
          leaves.push(change.school)
      }
      this.counts.attendance.joining += joins.length
      this.counts.attendance.leaving += leaves.length
      for (const school of joins) this.#covered(school).joining++
      for (const school of leaves) this.#covered(school).leaving++
      if (found !== undefined && this.source !== null && found.source === null) claimed.push(found.id)
      if (isNew) {
        if (found !== undefined) created.push(found.id)
      } else if (joins.length + leaves.length > 0 || this.#renamed.has(sourcedId)) {
        this.#touch(sourcedId)
        this.counts.students.changed++
        if (joins.length + leaves.length > 0) this.counts.students.changedSchools++
      } else this.counts.students.unchanged++
      if (found === undefined) continue
      for (const school of joins) {
        const id = this.#schools.get(school)?.id
        if (id !== undefined) joined.push({ studentId: found.id, schoolId: id })
      }
      for (const school of leaves) left.push({ studentId: found.id, schoolId: have.get(school)! })
    }
    if (!this.write) await this.#countLinksEnding(joined, left)
    else if (this.problems.count === 0) {
      await claimStudents(this.db, claimed, this.source!)
      await this.#applyAttendance(joined, left, created)
    }
  }

  /** A preview counts the partner links the change would end. */
  async #countLinksEnding(joined: Attendance[], left: Attendance[]): Promise<void> {
    this.#countLinks(await linksEndedBy(this.db, { joined, left }))
  }

  #countLinks(links: readonly Link[]): void {
    for (const link of links)
      this.linksEndedByOrganisation.set(
        link.organisationId,
        (this.linksEndedByOrganisation.get(link.organisationId) ?? 0) + 1,
      )
  }

  /** One batch's attendance, then the new students' tier in the change log (and to partners now linked). */
  async #applyAttendance(joined: Attendance[], left: Attendance[], created: string[]): Promise<void> {
    const outcome = await changeAttendance(this.db, { joined, left }, this.options.now)
    this.linksMade += outcome.linked.length
    this.linksEnded += outcome.unlinked.length
    this.#countLinks(outcome.unlinked)
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

  /**
   * Bulk users file: kept students it lacks leave the schools this export speaks for, and stay;
   * the schools of other exports (another district, region or source) they attend are kept.
   */
  async #noLongerPresent(): Promise<void> {
    if (this.only !== undefined) {
      for (const part of this.#slices([...this.only.absent])) await this.#leaveCovered(part)
      return
    }
    const listed = new Set(this.roster.students.map((s) => s.sourcedId))
    let after: string | undefined
    for (;;) {
      const page = await rosterStudentsAfter(this.db, after, ROSTER_CHUNK)
      if (page.length === 0) return
      after = page.at(-1)!.id
      await this.#leaveCovered(page.filter((s) => !listed.has(s.externalId)).map((s) => s.id))
    }
  }

  /** Students a bulk file lacks leave the schools it lists; counted once each. */
  #leaveCovered(studentIds: string[]): Promise<void> {
    return this.#unit(async () => {
      const attended = await schoolsOfStudents(this.db, studentIds)
      const left: Attendance[] = []
      for (const [studentId, schools] of attended) {
        const covered = schools.filter((s: Attended) => s.externalId !== null && this.#inScope(s.externalId))
        if (covered.length === 0) continue
        if (this.only === undefined) this.counts.students.noLongerPresent++
        if (covered.length === schools.length) this.counts.students.leavingAllSchools++
        if (!this.write) this.touched.absent.add(studentId)
        for (const school of covered) {
          this.#covered(school.externalId!).leaving++
          left.push({ studentId, schoolId: school.schoolId })
        }
      }
      await this.#leave(left)
    })
  }

  /** A delta's tobedeleted school: its students leave it; the school stays. */
  async #leaveSchool(sourcedId: string): Promise<void> {
    const schoolId = this.#schools.get(sourcedId)!.id
    let after: string | undefined
    for (let done = false; !done; )
      await this.#unit(async () => {
        const students = await studentsOfSchool(this.db, schoolId, after, ROSTER_CHUNK)
        done = students.length === 0
        after = students.at(-1)
        const leaving = students.filter((id) => !this.#erasing.has(id))
        this.#covered(sourcedId).leaving += leaving.length
        await this.#leave(leaving.map((studentId) => ({ studentId, schoolId })))
      })
  }

  async #leave(left: Attendance[]): Promise<void> {
    this.counts.attendance.leaving += left.length
    if (left.length === 0) return
    if (this.write) await this.#applyAttendance([], left, [])
    else await this.#countLinksEnding([], left)
  }
}
