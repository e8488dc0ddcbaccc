/**
 * Sharing students with a partner organisation on purpose (migration 0012): a school share holds
 * the school's students, present and future (school-shares.ts follows them as they join and
 * leave); a list share holds the students it was given. A link (`student_organisations`) to a
 * partner organisation exists exactly while some share of it in force holds the student, so
 * making a share links its students, and ending one unlinks those no other share holds, each
 * with a `student_unlinked` notice and webhook. Sandbox organisations hold synthetic students
 * through links of their own and are never shared with.
 *
 * Writers lock the schools and organisations concerned first (share-locks.ts).
 */
import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import { isoAt } from '../clock.js'
import { displayNameProblem } from '../domain/display-names.js'
import { ConflictError, NotFoundError } from '../domain/errors.js'
import { endUnsharedLinks, type Link } from './school-shares.js'
import { lockOrganisations, lockSchools } from './share-locks.js'
import type { Database, OrganisationRow, ShareRow } from './tables.js'
import { inTransaction } from './transaction.js'

type Db = Kysely<Database>

/** Rows per statement: under both engines' bound-parameter limits with room to spare. */
const CHUNK = 500

function* chunks<T>(items: readonly T[]): Generator<T[]> {
  for (let i = 0; i < items.length; i += CHUNK) yield items.slice(i, i + CHUNK)
}

/** A share just made: how many students it holds, and how many of them it linked anew. */
export interface ShareOutcome {
  share: ShareRow
  students: number
  linked: number
}

/** The organisation has a share of the school in force already: ending it comes first. */
export class ShareInForceError extends ConflictError {
  override name = 'ShareInForceError'
  constructor(readonly share: ShareRow) {
    super(`the school "${share.label}" is shared with this organisation already (share ${share.id})`)
  }
}

/** Students named that no student is, by id. */
export class UnknownStudentsError extends NotFoundError {
  override name = 'UnknownStudentsError'
  constructor(readonly ids: readonly string[]) {
    super(`no student ${ids.slice(0, 5).join(', ')}${ids.length > 5 ? ` and ${ids.length - 5} more` : ''}`)
  }
}

/** Sandbox (synthetic) students, which live in sandboxes only and are never shared. */
export class SandboxShareError extends ConflictError {
  override name = 'SandboxShareError'
  constructor(readonly ids: readonly string[]) {
    const which =
      ids.length === 1
        ? `student ${ids[0]} is a sandbox (synthetic) student`
        : `${ids.length} students are sandbox (synthetic) students`
    super(`${which}, which are never shared with a partner organisation`)
  }
}

/** The partner organisation `id`; a sandbox is refused, its students being synthetic and its own. */
async function partnerOrganisation(trx: Db, id: string): Promise<OrganisationRow> {
  const organisation = await trx.selectFrom('organisations').selectAll().where('id', '=', id).executeTakeFirst()
  if (organisation === undefined) throw new NotFoundError(`no organisation ${id}`)
  if (organisation.kind === 'sandbox')
    throw new ConflictError(
      `"${organisation.name}" is a sandbox organisation, which holds synthetic students only; ` +
        'share real students with a partner organisation',
    )
  return organisation
}

/**
 * Adds `studentIds` to the share and links each to its organisation where not linked yet;
 * returns how many links were made. The share's row exists (or is inserted in this transaction).
 */
export async function holdStudents(
  trx: Db,
  share: { id: string; organisationId: string },
  studentIds: readonly string[],
  now: number,
): Promise<number> {
  const at = isoAt(now)
  let linked = 0
  for (const part of chunks([...new Set(studentIds)])) {
    await trx
      .insertInto('share_students')
      .values(part.map((id) => ({ share_id: share.id, student_id: id, organisation_id: share.organisationId })))
      .onConflict((oc) => oc.columns(['share_id', 'student_id']).doNothing())
      .execute()
    const made = await trx
      .insertInto('student_organisations')
      .values(part.map((id) => ({ student_id: id, organisation_id: share.organisationId, created_at: at })))
      .onConflict((oc) => oc.columns(['student_id', 'organisation_id']).doNothing())
      .returning('student_id')
      .execute()
    linked += made.length
  }
  return linked
}

/**
 * Shares a school's students, present and future, with a partner organisation: they are linked
 * now, and school-shares.ts links those who join later. Refuses a sandbox organisation, and a
 * second share of the school in force for the organisation (ShareInForceError): of two racing
 * requests, one makes the share and the other is refused.
 */
export function shareSchool(
  db: Db,
  request: { organisationId: string; schoolId: string; createdBy: string | null },
  now: number,
): Promise<ShareOutcome> {
  return inTransaction(db, async (trx) => {
    const school = await trx.selectFrom('schools').selectAll().where('id', '=', request.schoolId).executeTakeFirst()
    if (school === undefined) throw new NotFoundError(`no school ${request.schoolId}`)
    await lockSchools(trx, [school.id])
    const organisation = await partnerOrganisation(trx, request.organisationId)
    await lockOrganisations(trx, [organisation.id])
    const existing = await trx
      .selectFrom('shares')
      .selectAll()
      .where('organisation_id', '=', organisation.id)
      .where('school_id', '=', school.id)
      .where('kind', '=', 'school')
      .where('ended_at', 'is', null)
      .executeTakeFirst()
    if (existing !== undefined) throw new ShareInForceError(existing)
    const share: ShareRow = {
      id: randomUUID(),
      organisation_id: organisation.id,
      kind: 'school',
      school_id: school.id,
      label: school.name,
      created_at: isoAt(now),
      created_by: request.createdBy,
      ended_at: null,
    }
    await trx.insertInto('shares').values(share).execute()
    const students = await trx
      .selectFrom('student_schools as ss')
      .innerJoin('students as s', 's.id', 'ss.student_id')
      .select('ss.student_id')
      .where('ss.school_id', '=', school.id)
      // Never a synthetic student, whatever a school's rows say.
      .where('s.sandbox', '=', 0)
      .execute()
    const ids = students.map((row) => row.student_id)
    const linked = await holdStudents(trx, { id: share.id, organisationId: organisation.id }, ids, now)
    return { share, students: ids.length, linked }
  })
}

/**
 * Shares the students `studentIds` with a partner organisation under `label`. Refuses the whole
 * list when any id is no student's (UnknownStudentsError) or a sandbox student's
 * (SandboxShareError), and an empty list or label.
 */
export async function shareList(
  db: Db,
  request: { organisationId: string; studentIds: readonly string[]; label: string; createdBy: string | null },
  now: number,
): Promise<ShareOutcome> {
  const label = request.label.trim()
  const problem = displayNameProblem(label)
  if (problem !== null) throw new ConflictError(`the share's label ${problem}`)
  const ids = [...new Set(request.studentIds.map((id) => id.toLowerCase()))]
  if (ids.length === 0) throw new ConflictError('a list share needs at least one student')
  return inTransaction(db, async (trx) => {
    const organisation = await partnerOrganisation(trx, request.organisationId)
    await lockOrganisations(trx, [organisation.id])
    const stored = new Map<string, boolean>()
    for (const part of chunks(ids))
      for (const row of await trx.selectFrom('students').select(['id', 'sandbox']).where('id', 'in', part).execute())
        stored.set(row.id, Number(row.sandbox) === 1)
    const unknown = ids.filter((id) => !stored.has(id))
    if (unknown.length > 0) throw new UnknownStudentsError(unknown)
    const sandbox = ids.filter((id) => stored.get(id) === true)
    if (sandbox.length > 0) throw new SandboxShareError(sandbox)
    const share: ShareRow = {
      id: randomUUID(),
      organisation_id: organisation.id,
      kind: 'list',
      school_id: null,
      label,
      created_at: isoAt(now),
      created_by: request.createdBy,
      ended_at: null,
    }
    await trx.insertInto('shares').values(share).execute()
    const linked = await holdStudents(trx, { id: share.id, organisationId: organisation.id }, ids, now)
    return { share, students: ids.length, linked }
  })
}

/** What ending a share did. */
export interface EndedShare {
  share: ShareRow
  /** False when it had ended already: nothing changed. */
  ended: boolean
  /** Students it held. */
  released: number
  /** Of those, the ones no other share of the organisation holds: unlinked, each told. */
  unlinked: Link[]
  /** `student.unlinked` deliveries queued. */
  webhooks: number
}

/**
 * Ends a share: it holds no student any more, and the students no other share of its
 * organisation holds are unlinked with a `student_unlinked` notice and webhook each. A school
 * share ended no longer follows the school. Ending a share that has ended changes nothing.
 */
export function endShare(db: Db, shareId: string, now: number): Promise<EndedShare> {
  return inTransaction(db, async (trx) => {
    const found = await trx.selectFrom('shares').selectAll().where('id', '=', shareId).executeTakeFirst()
    if (found === undefined) throw new NotFoundError(`no share ${shareId}`)
    if (found.school_id !== null) await lockSchools(trx, [found.school_id])
    await lockOrganisations(trx, [found.organisation_id])
    // Read again under the locks: another transaction may have ended it meanwhile.
    const share = await trx.selectFrom('shares').selectAll().where('id', '=', shareId).executeTakeFirstOrThrow()
    if (share.ended_at !== null) return { share, ended: false, released: 0, unlinked: [], webhooks: 0 }
    share.ended_at = isoAt(now)
    await trx.updateTable('shares').set({ ended_at: share.ended_at }).where('id', '=', share.id).execute()
    const held = await trx
      .deleteFrom('share_students')
      .where('share_id', '=', share.id)
      .returning(['student_id', 'organisation_id'])
      .execute()
    const { unlinked, webhooks } = await endUnsharedLinks(
      trx,
      held.map((row) => ({ studentId: row.student_id, organisationId: row.organisation_id })),
      now,
    )
    return { share, ended: true, released: held.length, unlinked, webhooks }
  })
}
