/**
 * Which schools students attend, and the links that follow from it (migration 0012).
 *
 * A link (`student_organisations`) to a partner organisation exists exactly while some share of
 * that organisation holds the student (`share_students`). A school share holds the school's
 * students present and future: a student who joins the school is added to every share of it
 * still in force and linked, and one who leaves it is taken out of them and, when no other share
 * of the organisation holds them, unlinked with a `student_unlinked` notice and webhook, as
 * `links remove` does (student-removal.ts).
 *
 * Callers run these inside their own transaction, with the other writes of the same change
 * first: the notices are numbered last (student-change-log.ts). The schools and organisations
 * concerned are locked first (share-locks.ts), so that shares made or ended meanwhile are seen.
 */
import type { Kysely } from 'kysely'
import { isoAt } from '../clock.js'
import { lockOrganisations, lockSchools } from './share-locks.js'
import { recordStudentChanges } from './student-change-log.js'
import type { Database } from './tables.js'
import { announceStudentNotices } from './webhook-repository.js'

type Db = Kysely<Database>

/** Rows per statement: under both engines' bound-parameter limits with room to spare. */
const CHUNK = 500

function* chunks<T>(items: readonly T[]): Generator<T[]> {
  for (let i = 0; i < items.length; i += CHUNK) yield items.slice(i, i + CHUNK)
}

export interface Attendance {
  studentId: string
  schoolId: string
}

export interface Link {
  studentId: string
  organisationId: string
}

export interface MembershipOutcome {
  /** Links made because a student joined a shared school. */
  linked: Link[]
  /** Links ended because a student left every shared school of the organisation's shares. */
  unlinked: Link[]
  /** `student.unlinked` deliveries queued. */
  webhooks: number
}

/**
 * Records students joining (`joined`) and leaving (`left`) schools, and makes and ends the links
 * the organisations' school shares imply. A pair already recorded as joined, or not recorded as
 * left, changes nothing.
 */
export async function changeAttendance(
  trx: Db,
  change: { joined: readonly Attendance[]; left: readonly Attendance[] },
  now: number,
): Promise<MembershipOutcome> {
  const at = isoAt(now)
  const outcome: MembershipOutcome = { linked: [], unlinked: [], webhooks: 0 }
  // Before reading any share: a school being shared or its share ending waits, or is waited for.
  const schools = [...new Set([...change.joined, ...change.left].map((row) => row.schoolId))]
  await lockSchools(trx, schools)
  const sharing = new Set<string>()
  for (const part of chunks(schools))
    for (const list of (await activeSchoolShares(trx, part)).values())
      for (const share of list) sharing.add(share.organisationId)
  await lockOrganisations(trx, [...sharing])

  const removedShareRows: Link[] = []
  for (const part of chunks(change.left)) {
    const shares = await activeSchoolShares(
      trx,
      part.map((row) => row.schoolId),
    )
    for (const row of part) {
      await trx
        .deleteFrom('student_schools')
        .where('student_id', '=', row.studentId)
        .where('school_id', '=', row.schoolId)
        .execute()
      for (const share of shares.get(row.schoolId) ?? []) {
        const removed = await trx
          .deleteFrom('share_students')
          .where('share_id', '=', share.id)
          .where('student_id', '=', row.studentId)
          .executeTakeFirst()
        if (Number(removed.numDeletedRows) > 0)
          removedShareRows.push({ studentId: row.studentId, organisationId: share.organisationId })
      }
    }
  }

  for (const given of chunks(change.joined)) {
    // Only the pairs recorded now: a student unlinked by hand stays unlinked while still at the
    // school, and a roster listing them again does not link them anew.
    const part = (
      await trx
        .insertInto('student_schools')
        .values(given.map((row) => ({ student_id: row.studentId, school_id: row.schoolId, created_at: at })))
        .onConflict((oc) => oc.columns(['student_id', 'school_id']).doNothing())
        .returning(['student_id', 'school_id'])
        .execute()
    ).map((row) => ({ studentId: row.student_id, schoolId: row.school_id }))
    if (part.length === 0) continue
    const shares = await activeSchoolShares(
      trx,
      part.map((row) => row.schoolId),
    )
    const members = part.flatMap((row) =>
      (shares.get(row.schoolId) ?? []).map((share) => ({
        share_id: share.id,
        student_id: row.studentId,
        organisation_id: share.organisationId,
      })),
    )
    if (members.length === 0) continue
    for (const rows of chunks(members)) {
      await trx
        .insertInto('share_students')
        .values(rows)
        .onConflict((oc) => oc.columns(['share_id', 'student_id']).doNothing())
        .execute()
      const made = await trx
        .insertInto('student_organisations')
        .values(
          rows.map((row) => ({ student_id: row.student_id, organisation_id: row.organisation_id, created_at: at })),
        )
        .onConflict((oc) => oc.columns(['student_id', 'organisation_id']).doNothing())
        .returning(['student_id', 'organisation_id'])
        .execute()
      for (const row of made) outcome.linked.push({ studentId: row.student_id, organisationId: row.organisation_id })
    }
  }

  const ended = await endUnsharedLinks(trx, removedShareRows, now)
  outcome.unlinked = ended.unlinked
  outcome.webhooks = ended.webhooks
  return outcome
}

/**
 * Ends the links among `links` that no share of their organisation holds any more, with a
 * `student_unlinked` notice and webhook each. Call it after taking students out of shares, as
 * the last write of the transaction.
 */
export async function endUnsharedLinks(
  trx: Db,
  links: readonly Link[],
  now: number,
): Promise<{ unlinked: Link[]; webhooks: number }> {
  const byOrganisation = new Map<string, Set<string>>()
  for (const link of links) {
    const students = byOrganisation.get(link.organisationId) ?? new Set<string>()
    students.add(link.studentId)
    byOrganisation.set(link.organisationId, students)
  }
  // Two statements per chunk of students rather than two per student, as ending a large share
  // holds SQLite's write lock all the while (docs/performance.md, "Ending a share").
  const ended = new Set<string>()
  for (const [organisationId, students] of byOrganisation)
    for (const part of chunks([...students])) {
      const held = await trx
        .selectFrom('share_students')
        .select('student_id')
        .where('organisation_id', '=', organisationId)
        .where('student_id', 'in', part)
        .execute()
      const stillHeld = new Set(held.map((row) => row.student_id))
      const free = part.filter((studentId) => !stillHeld.has(studentId))
      if (free.length === 0) continue
      const removed = await trx
        .deleteFrom('student_organisations')
        .where('organisation_id', '=', organisationId)
        .where('student_id', 'in', free)
        .returning('student_id')
        .execute()
      for (const row of removed) ended.add(`${row.student_id} ${organisationId}`)
    }
  // In the order the links came, once each.
  const unlinked = [...new Map(links.map((link) => [`${link.studentId} ${link.organisationId}`, link])).entries()]
    .filter(([key]) => ended.has(key))
    .map(([, link]) => link)
  const webhooks = await announceStudentNotices(trx, 'student.unlinked', unlinked, now)
  const changedAt = isoAt(now)
  await recordStudentChanges(
    trx,
    unlinked.map((link) => ({ type: 'student_unlinked' as const, ...link, changedAt })),
  )
  return { unlinked, webhooks }
}

interface ActiveShare {
  id: string
  organisationId: string
}

/** The school shares in force of each of `schoolIds`. */
export async function activeSchoolShares(trx: Db, schoolIds: readonly string[]): Promise<Map<string, ActiveShare[]>> {
  const bySchool = new Map<string, ActiveShare[]>()
  const unique = [...new Set(schoolIds)]
  if (unique.length === 0) return bySchool
  const rows = await trx
    .selectFrom('shares')
    .select(['id', 'organisation_id', 'school_id'])
    .where('kind', '=', 'school')
    .where('ended_at', 'is', null)
    .where('school_id', 'in', unique)
    .execute()
  for (const row of rows) {
    const list = bySchool.get(row.school_id!) ?? []
    list.push({ id: row.id, organisationId: row.organisation_id })
    bySchool.set(row.school_id!, list)
  }
  return bySchool
}
