/**
 * A student joining or leaving a school, and the links that follow (migration 0012). A school
 * share holds the school's students present and future: a student who joins the school is added
 * to every share of it still in force and linked, and one who leaves it is taken out of them
 * and, when no other share of the organisation holds them, unlinked with a `student_unlinked`
 * notice and webhook, as `links remove` does (unlink.ts).
 *
 * Callers run this inside their own transaction, with the other writes of the same change first:
 * the notices are numbered last (storage/student-change-log.ts). The schools and organisations
 * concerned are locked first (storage/share-lock-repository.ts), so that shares made or ended meanwhile
 * are seen.
 */
import type { Kysely } from 'kysely'
import { isoAt } from '../clock.js'
import {
  type Attendance,
  activeSchoolShares,
  endUnsharedLinks,
  type Link,
  leaveSchool,
  recordAttendance,
  removeFromShare,
} from '../storage/school-share-repository.js'
import { lockOrganisations, lockSchools } from '../storage/share-lock-repository.js'
import { holdInShares } from '../storage/share-repository.js'
import type { Database } from '../storage/tables.js'
import { chunks } from '../storage/statement-chunks.js'

type Db = Kysely<Database>

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
  // Before reading any share: a school being shared or its share ending waits, or is waited for.
  const schools = [...new Set([...change.joined, ...change.left].map((row) => row.schoolId))]
  await lockSchools(trx, schools)
  const sharing = new Set<string>()
  for (const part of chunks(schools))
    for (const list of (await activeSchoolShares(trx, part)).values())
      for (const share of list) sharing.add(share.organisationId)
  await lockOrganisations(trx, [...sharing])
  const removedShareRows = await leave(trx, change.left)
  const linked = await join(trx, change.joined, isoAt(now))
  const ended = await endUnsharedLinks(trx, removedShareRows, now)
  return { linked, unlinked: ended.unlinked, webhooks: ended.webhooks }
}

/** Records `left`; returns the links whose share no longer holds the student. */
async function leave(trx: Db, left: readonly Attendance[]): Promise<Link[]> {
  const removedShareRows: Link[] = []
  for (const part of chunks(left)) {
    const shares = await activeSchoolShares(
      trx,
      part.map((row) => row.schoolId),
    )
    for (const row of part) {
      await leaveSchool(trx, row)
      for (const share of shares.get(row.schoolId) ?? [])
        if (await removeFromShare(trx, share.id, row.studentId))
          removedShareRows.push({ studentId: row.studentId, organisationId: share.organisationId })
    }
  }
  return removedShareRows
}

/** Records `joined`; returns the links made by the school shares that now hold the students. */
async function join(trx: Db, joined: readonly Attendance[], at: string): Promise<Link[]> {
  const linked: Link[] = []
  for (const given of chunks(joined)) {
    // Only the pairs recorded now: a student unlinked by hand stays unlinked while still at the
    // school, and a roster listing them again does not link them anew.
    const part = await recordAttendance(trx, given, at)
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
    for (const rows of chunks(members)) linked.push(...(await holdInShares(trx, rows, at)))
  }
  return linked
}
