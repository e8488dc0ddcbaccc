/**
 * Sharing students with a partner organisation on purpose (migration 0012): a school share holds
 * the school's students, present and future (school-attendance.ts follows them as they join and
 * leave); a list share holds the students it was given. A link (`student_organisations`) to a
 * partner organisation exists exactly while some share of it in force holds the student, so
 * making a share links its students, and ending one unlinks those no other share holds, each
 * with a `student_unlinked` notice and webhook. Sandbox organisations hold synthetic students
 * through links of their own and are never shared with.
 *
 * Each change locks the schools and organisations concerned first (storage/share-lock-repository.ts) and,
 * when an operator makes it from the dashboard, writes its audit row in the same transaction.
 */
import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import { isoAt } from '../clock.js'
import { displayNameProblem } from '../domain/display-names.js'
import { ConflictError, NotFoundError } from '../domain/errors.js'
import { organisationById } from '../storage/access-repository.js'
import { endUnsharedLinks, type Link } from '../storage/school-share-repository.js'
import { schoolById } from '../storage/school-repository.js'
import { lockOrganisations, lockSchools } from '../storage/share-lock-repository.js'
import {
  holdStudents,
  insertShare,
  markShareEnded,
  realStudentsOfSchool,
  releaseShareStudents,
  schoolShareInForce,
  shareById,
} from '../storage/share-repository.js'
import { sandboxFlags } from '../storage/student-reference-repository.js'
import type { Database, OrganisationRow, ShareRow } from '../storage/tables.js'
import { inTransaction } from '../storage/transaction.js'
import { auditOperator, type OperatorAudit } from './operator-action.js'

type Db = Kysely<Database>

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
  const organisation = await organisationById(trx, id)
  if (organisation === undefined) throw new NotFoundError(`no organisation ${id}`)
  if (organisation.kind === 'sandbox')
    throw new ConflictError(
      `"${organisation.name}" is a sandbox organisation, which holds synthetic students only; ` +
        'share real students with a partner organisation',
    )
  return organisation
}

/** The organisation as an audit row names it. */
function named(organisation: Pick<OrganisationRow, 'id' | 'name'>) {
  return { organisation: organisation.name, organisationId: organisation.id }
}

/** Writes the share, holds `studentIds` in it, and audits it when an operator made it. */
async function makeShare(
  trx: Db,
  share: ShareRow,
  organisation: OrganisationRow,
  studentIds: readonly string[],
  now: number,
  audit: OperatorAudit | undefined,
): Promise<ShareOutcome> {
  await insertShare(trx, share)
  const linked = await holdStudents(trx, { id: share.id, organisationId: organisation.id }, studentIds, now)
  const outcome = { share, students: studentIds.length, linked }
  const detail = { ...named(organisation), kind: share.kind, label: share.label, students: outcome.students, linked }
  await auditOperator(trx, audit, { action: 'links.add', target: `share:${share.id}`, detail }, now)
  return outcome
}

/**
 * Shares a school's students, present and future, with a partner organisation: they are linked
 * now, and school-attendance.ts links those who join later. Refuses a sandbox organisation, and a
 * second share of the school in force for the organisation (ShareInForceError): of two racing
 * requests, one makes the share and the other is refused.
 */
export function shareSchool(
  db: Db,
  request: { organisationId: string; schoolId: string; createdBy: string | null },
  now: number,
  audit?: OperatorAudit,
): Promise<ShareOutcome> {
  return inTransaction(db, async (trx) => {
    const school = await schoolById(trx, request.schoolId)
    if (school === undefined) throw new NotFoundError(`no school ${request.schoolId}`)
    await lockSchools(trx, [school.id])
    const organisation = await partnerOrganisation(trx, request.organisationId)
    await lockOrganisations(trx, [organisation.id])
    const existing = await schoolShareInForce(trx, organisation.id, school.id)
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
    const ids = await realStudentsOfSchool(trx, school.id)
    return makeShare(trx, share, organisation, ids, now, audit)
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
  audit?: OperatorAudit,
): Promise<ShareOutcome> {
  const label = request.label.trim()
  const problem = displayNameProblem(label)
  if (problem !== null) throw new ConflictError(`the share's label ${problem}`)
  const ids = [...new Set(request.studentIds.map((id) => id.toLowerCase()))]
  if (ids.length === 0) throw new ConflictError('a list share needs at least one student')
  return inTransaction(db, async (trx) => {
    const organisation = await partnerOrganisation(trx, request.organisationId)
    await lockOrganisations(trx, [organisation.id])
    const stored = await sandboxFlags(trx, ids)
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
    return makeShare(trx, share, organisation, ids, now, audit)
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
export function endShare(db: Db, shareId: string, now: number, audit?: OperatorAudit): Promise<EndedShare> {
  return inTransaction(db, async (trx) => {
    const ended = await endShareRows(trx, shareId, now)
    if (audit === undefined) return ended
    const { share } = ended
    const detail = {
      ...named((await organisationById(trx, share.organisation_id))!),
      kind: share.kind,
      label: share.label,
      ended: ended.ended,
      released: ended.released,
      unlinked: ended.unlinked.length,
      webhooks: ended.webhooks,
    }
    await auditOperator(trx, audit, { action: 'links.remove', target: `share:${share.id}`, detail }, now)
    return ended
  })
}

async function endShareRows(trx: Db, shareId: string, now: number): Promise<EndedShare> {
  const found = await shareById(trx, shareId)
  if (found === undefined) throw new NotFoundError(`no share ${shareId}`)
  if (found.school_id !== null) await lockSchools(trx, [found.school_id])
  await lockOrganisations(trx, [found.organisation_id])
  // Read again under the locks: another transaction may have ended it meanwhile.
  const share = (await shareById(trx, shareId))!
  if (share.ended_at !== null) return { share, ended: false, released: 0, unlinked: [], webhooks: 0 }
  share.ended_at = isoAt(now)
  await markShareEnded(trx, share.id, share.ended_at)
  const held = await releaseShareStudents(trx, share.id)
  const { unlinked, webhooks } = await endUnsharedLinks(trx, held, now)
  return { share, ended: true, released: held.length, unlinked, webhooks }
}
