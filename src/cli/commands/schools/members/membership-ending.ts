/**
 * What a `curriculum schools members import` file's `left` rows would end, worked out before
 * anything is written (storage/links-ending-repository.ts, by the rule cases/school-attendance.ts applies), as the
 * preview the command shows and asks about (confirm.ts): the students leaving a school they
 * attend, and the links to partners that end with it, by organisation.
 */
import type { Kysely } from 'kysely'
import type { MembershipRow } from '../../../../cases/csv-import.js'
import type { ImportRun } from '../../../../imports/record-spec.js'
import type { Attendance, Link } from '../../../../storage/school-share-repository.js'
import type { Database } from '../../../../storage/tables.js'
import type { PendingChange } from '../../../confirm.js'
import { plural } from '../../../output.js'
import { count } from '../../../progress-bar.js'

/** Students per lookup: under both engines' bound-parameter limits. */
const CHUNK = 500

/** One student's rows of the file, for a student with a left row. */
interface Moves {
  studentId: string
  left: Attendance[]
  joined: Attendance[]
}

/** What a members file's `left` rows would end: shown, and asked about, before anything is written. */
export async function leavingChange(
  db: Kysely<Database>,
  rows: AsyncIterable<MembershipRow[]>,
  run: ImportRun,
): Promise<PendingChange> {
  const [{ linksEndedBy }, { organisationNames, schoolsOfStudents }] = await Promise.all([
    import('../../../../storage/links-ending-repository.js'),
    import('../../../../storage/roster-repository.js'),
  ])
  // Rows come in key order, a student's together: only the students with a left row are kept.
  const moves: Moves[] = []
  let current: Moves | undefined
  let leftRows = 0
  for await (const batch of rows)
    for (const row of batch) {
      if (current?.studentId !== row.studentId) {
        if (current !== undefined && current.left.length > 0) moves.push(current)
        current = { studentId: row.studentId, left: [], joined: [] }
      }
      const pair = { studentId: row.studentId, schoolId: row.schoolId }
      if (row.left) {
        leftRows++
        current.left.push(pair)
      } else current.joined.push(pair)
    }
  if (current !== undefined && current.left.length > 0) moves.push(current)
  const leaving: Attendance[] = []
  const unlinked: Link[] = []
  for (let from = 0; from < moves.length; from += CHUNK) {
    const part = moves.slice(from, from + CHUNK)
    const attended = await schoolsOfStudents(
      db,
      part.map((move) => move.studentId),
    )
    for (const move of part)
      for (const pair of move.left)
        if (attended.get(move.studentId)?.some((school) => school.schoolId === pair.schoolId)) leaving.push(pair)
    // Every pair of one student in the same call, as linksEndedBy asks.
    unlinked.push(
      ...(await linksEndedBy(db, {
        joined: part.flatMap((move) => move.joined),
        left: part.flatMap((move) => move.left),
      })),
    )
  }
  const byOrganisation = new Map<string, number>()
  for (const link of unlinked)
    byOrganisation.set(link.organisationId, (byOrganisation.get(link.organisationId) ?? 0) + 1)
  const names = await organisationNames(db, [...byOrganisation.keys()])
  const organisations = [...byOrganisation].map(([id, links]) => ({ id, name: names.get(id) ?? id, links }))
  const lines =
    leftRows === 0
      ? []
      : [
          `${plural(leaving.length, 'row records a student leaving', 'rows record students leaving')} a school they ` +
            `attend` +
            (leftRows > leaving.length
              ? ` (${plural(leftRows - leaving.length, 'other left row names', 'other left rows name')} a school ` +
                'the student does not attend: nothing to do)'
              : ''),
          unlinked.length === 0
            ? 'no link to a partner ends: no school share in force holds these students through those schools alone'
            : `${plural(unlinked.length, 'link')} to partners end: ` +
              `${organisations.map((o) => `${o.name} (${o.id}) ${count(o.links)}`).join(', ')}; each organisation's ` +
              'keys get 404 for those students at once, and its change feed and webhooks get a student_unlinked ' +
              'notice (the id only) for each, telling it to delete its copy',
        ]
  return {
    lines,
    data: { file: run.file, preview: { leaving: leaving.length, unlinked: unlinked.length, organisations } },
    ends: leaving.length > 0,
    action: 'record them leaving',
  }
}
