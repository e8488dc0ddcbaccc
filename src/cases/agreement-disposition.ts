/**
 * The end of an agreement, carried out (docs/end-of-agreement.md): once an organisation has had no
 * agreement in force for the disposition period of the one that ended last (domain/disposition.ts),
 * one transaction records the disposition with the ids of the students linked then, ends every
 * share of the organisation still in force, takes their students out of them, and ends the links,
 * each with its `student_unlinked` notice and `student.unlinked` webhook (storage/school-share-repository.ts
 * `endUnsharedLinks`). The hourly task (services/disposition-task.ts) and `curriculum agreement
 * dispose` both run it.
 *
 * The organisation's row is locked first, and the disposition row, unique per agreement, written
 * before anything changes: on PostgreSQL a second instance doing the same at the same moment
 * waits for the first's commit, finds the row and stops, having changed nothing; on SQLite
 * writing transactions run one at a time. The organisation's agreements are read again inside the
 * transaction, so an agreement recorded meanwhile keeps everything as it is. A new agreement
 * recorded later starts clean: its shares are made anew, and only its own end is disposed of.
 * The operator may carry out one organisation's disposition at once, also before its period is
 * over (`curriculum agreement dispose`): the same transaction, so still once.
 */
import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import { isoAt } from '../clock.js'
import { agreementInForceAt } from '../domain/agreement-terms.js'
import { type AgreementEnd, currentEnd, isDispositionDue } from '../domain/disposition.js'
import {
  type AgreementOf,
  agreementsOf,
  claimDisposition,
  disposedAgreementIds,
  dispositionScope,
  dispositionUnlinkedAt,
  endDisposedShares,
  linkedStudentIds,
  partnerAgreements,
} from '../storage/agreement-disposition-repository.js'
import { endUnsharedLinks } from '../storage/school-share-repository.js'
import { lockOrganisations } from '../storage/share-lock-repository.js'
import type { AgreementRow, Database } from '../storage/tables.js'
import { inTransaction } from '../storage/transaction.js'

type Db = Kysely<Database>

export interface DispositionOutcome {
  organisationId: string
  agreementId: string
  /** Students linked when the links ended: the partner must have deleted them. */
  students: number
  sharesEnded: number
  /** `student.unlinked` deliveries queued. */
  webhooks: number
}

/**
 * Carries out every disposition due at `now` that no instance has carried out yet, each in its
 * own transaction; returns what each did. Safe to run at once on several instances.
 */
export async function disposeDueAgreements(db: Db, now: number): Promise<DispositionOutcome[]> {
  const done = await disposedAgreementIds(db)
  const outcomes: DispositionOutcome[] = []
  for (const [organisationId, agreements] of await partnerAgreements(db)) {
    const end = currentEnd(agreements, now)
    if (end === undefined || !isDispositionDue(end, now) || done.has(end.agreement.id)) continue
    const outcome = await dispose(db, organisationId, end.agreement.id, now)
    if (outcome !== undefined) outcomes.push(outcome)
  }
  return outcomes
}

/**
 * What disposing of `organisationId`'s end at `now` would do, or why there is none to dispose
 * of: no agreement, one in force, none ended, or its links ended already.
 */
export type DispositionPlan =
  | { kind: 'no_agreement' }
  | { kind: 'in_force'; agreement: AgreementRow }
  | { kind: 'not_ended' }
  | { kind: 'disposed'; end: AgreementEnd<AgreementOf>; unlinkedAt: string }
  | {
      kind: 'to_dispose'
      end: AgreementEnd<AgreementOf>
      /** Whether its disposition period has run out. */
      due: boolean
      /** Students linked now, whose links would end. */
      links: number
      /** Shares in force, which would end. */
      shares: number
      /** Enabled endpoints subscribed to `student.unlinked`. */
      endpoints: number
    }

export async function dispositionPlan(db: Db, organisationId: string, now: number): Promise<DispositionPlan> {
  const agreements = await agreementsOf(db, organisationId)
  if (agreements.length === 0) return { kind: 'no_agreement' }
  const inForce = agreementInForceAt(agreements, now)
  if (inForce !== undefined) return { kind: 'in_force', agreement: inForce.row }
  const end = currentEnd(agreements, now)
  if (end === undefined) return { kind: 'not_ended' }
  const unlinkedAt = await dispositionUnlinkedAt(db, end.agreement.id)
  if (unlinkedAt !== undefined) return { kind: 'disposed', end, unlinkedAt }
  const { links, shares, endpointEvents } = await dispositionScope(db, organisationId)
  return {
    kind: 'to_dispose',
    end,
    due: isDispositionDue(end, now),
    links,
    shares,
    endpoints: endpointEvents.filter((events) => events.split(' ').includes('student.unlinked')).length,
  }
}

/**
 * Carries out the disposition of `organisationId`'s end of `agreementId` now, on demand (a drill,
 * or a district asking for it): `early` lets it run before the disposition period is over. The
 * same transaction as the hourly run's, so it is done once whoever runs it: undefined when it was
 * done meanwhile, or the organisation is no longer in that end.
 */
export function disposeOnDemand(
  db: Db,
  organisationId: string,
  agreementId: string,
  now: number,
  early: boolean,
): Promise<DispositionOutcome | undefined> {
  return dispose(db, organisationId, agreementId, now, early)
}

/** One organisation's disposition, unless it is no longer due (or `early`) or was carried out meanwhile. */
function dispose(db: Db, organisationId: string, agreementId: string, now: number, early = false) {
  return inTransaction(db, async (trx): Promise<DispositionOutcome | undefined> => {
    // The organisation's row locked first, as every writer of its shares and links does: a share
    // made at this moment then waits, and cannot leave a link behind the shares ended here.
    await lockOrganisations(trx, [organisationId])
    const end = currentEnd(await agreementsOf(trx, organisationId), now)
    if (end === undefined || end.agreement.id !== agreementId || !(early || isDispositionDue(end, now)))
      return undefined
    const students = await linkedStudentIds(trx, organisationId)
    const at = isoAt(now)
    const disposition = { id: randomUUID(), organisationId, agreementId }
    const claimed = await claimDisposition(trx, {
      ...disposition,
      endedAt: end.endedAt,
      deletionDueAt: end.deletionDueAt,
      unlinkedAt: at,
      students,
    })
    if (!claimed) return undefined
    const sharesEnded = await endDisposedShares(trx, disposition, at)
    // Last: numbering the notices holds the change counter until the commit (student-change-log.ts).
    const { webhooks } = await endUnsharedLinks(
      trx,
      students.map((studentId) => ({ studentId, organisationId })),
      now,
    )
    return { organisationId, agreementId, students: students.length, sharesEnded, webhooks }
  })
}
