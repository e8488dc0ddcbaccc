/**
 * Which partner links a change of attendance would end, without changing anything: what a roster
 * import's preview says, per partner, before the operator confirms (cases/school-attendance.ts
 * makes the change itself, by the same rule: a link ends when a student leaves the last share of its
 * organisation that holds them).
 */
import type { Kysely } from 'kysely'
import { type Attendance, activeSchoolShares, type Link } from './school-share-repository.js'
import type { Database } from './tables.js'
import { chunks } from './statement-chunks.js'

function add(map: Map<string, Set<string>>, key: string, value: string): void {
  const set = map.get(key) ?? new Set<string>()
  set.add(value)
  map.set(key, set)
}

/**
 * The links ending if `change` were applied: those whose student leaves, in `left`, a school
 * whose share holds them, and keeps no other share of the organisation (nor joins, in `joined`,
 * a school it shares). Every pair of one student must be in the same call.
 */
export async function linksEndedBy(
  db: Kysely<Database>,
  change: { joined: readonly Attendance[]; left: readonly Attendance[] },
): Promise<Link[]> {
  if (change.left.length === 0) return []
  const schools = [...new Set([...change.joined, ...change.left].map((row) => row.schoolId))]
  const shares = new Map<string, { id: string; organisationId: string }[]>()
  for (const part of chunks(schools))
    for (const [school, list] of await activeSchoolShares(db, part)) shares.set(school, list)
  const leaving = new Map<string, Set<string>>()
  for (const row of change.left)
    for (const share of shares.get(row.schoolId) ?? []) add(leaving, row.studentId, share.id)
  const joining = new Map<string, Set<string>>()
  for (const row of change.joined)
    for (const share of shares.get(row.schoolId) ?? []) add(joining, row.studentId, share.organisationId)

  const losing = new Map<string, Set<string>>()
  const keeping = new Map<string, Set<string>>()
  for (const part of chunks([...leaving.keys()])) {
    const held = await db
      .selectFrom('share_students')
      .select(['share_id', 'student_id', 'organisation_id'])
      .where('student_id', 'in', part)
      .execute()
    for (const row of held) {
      const left = leaving.get(row.student_id)?.has(row.share_id) === true
      add(left ? losing : keeping, row.student_id, row.organisation_id)
    }
  }
  const ended: Link[] = []
  for (const [studentId, organisations] of losing)
    for (const organisationId of organisations)
      if (!keeping.get(studentId)?.has(organisationId) && !joining.get(studentId)?.has(organisationId))
        ended.push({ studentId, organisationId })
  return ended
}
