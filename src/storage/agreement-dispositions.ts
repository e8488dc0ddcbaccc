/**
 * The end of an agreement, carried out (migration 0013, docs/end-of-agreement.md): once an
 * organisation has had no agreement in force for the disposition period of the one that ended
 * last (domain/disposition.ts), one transaction records the disposition with the ids of the
 * students linked then, ends every share of the organisation still in force, takes their students
 * out of them, and ends the links, each with its `student_unlinked` notice and `student.unlinked`
 * webhook (school-shares.ts `endUnsharedLinks`).
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
import { lockOrganisations } from './share-locks.js'
import { agreementInForceAt } from '../domain/agreement-terms.js'
import { type AgreementEnd, currentEnd, type DisposableAgreement, isDispositionDue } from '../domain/disposition.js'
import { endUnsharedLinks } from './school-shares.js'
import type { AgreementRow, Database } from './tables.js'
import { inTransaction } from './transaction.js'

type Db = Kysely<Database>

/** Rows per statement: under both engines' bound-parameter limits with room to spare. */
const CHUNK = 500

export interface AgreementOf extends DisposableAgreement {
  row: AgreementRow
}

/** An agreement row as the disposition rule reads it. */
export function disposable(row: AgreementRow): AgreementOf {
  return {
    id: row.id,
    signedAt: row.signed_at,
    expiresAt: row.expires_at,
    endedAt: row.ended_at,
    dispositionDays: row.disposition_days,
    row,
  }
}

export interface DispositionOutcome {
  organisationId: string
  agreementId: string
  /** Students linked when the links ended: the partner must have deleted them. */
  students: number
  sharesEnded: number
  /** `student.unlinked` deliveries queued. */
  webhooks: number
}

/** Every partner organisation's agreements, by organisation. */
async function partnerAgreements(db: Db): Promise<Map<string, AgreementOf[]>> {
  const rows = await db
    .selectFrom('agreements as a')
    .innerJoin('organisations as o', 'o.id', 'a.organisation_id')
    .selectAll('a')
    .where('o.kind', '=', 'partner')
    .execute()
  const byOrganisation = new Map<string, AgreementOf[]>()
  for (const row of rows) {
    const list = byOrganisation.get(row.organisation_id) ?? []
    list.push(disposable(row))
    byOrganisation.set(row.organisation_id, list)
  }
  return byOrganisation
}

/**
 * Carries out every disposition due at `now` that no instance has carried out yet, each in its
 * own transaction; returns what each did. Safe to run at once on several instances.
 */
export async function disposeDueAgreements(db: Db, now: number): Promise<DispositionOutcome[]> {
  const done = new Set(
    (await db.selectFrom('agreement_dispositions').select('agreement_id').execute()).map((row) => row.agreement_id),
  )
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
  const rows = await db.selectFrom('agreements').selectAll().where('organisation_id', '=', organisationId).execute()
  if (rows.length === 0) return { kind: 'no_agreement' }
  const inForce = agreementInForceAt(rows.map(disposable), now)
  if (inForce !== undefined) return { kind: 'in_force', agreement: inForce.row }
  const end = currentEnd(rows.map(disposable), now)
  if (end === undefined) return { kind: 'not_ended' }
  const done = await db
    .selectFrom('agreement_dispositions')
    .select('unlinked_at')
    .where('agreement_id', '=', end.agreement.id)
    .executeTakeFirst()
  if (done !== undefined) return { kind: 'disposed', end, unlinkedAt: done.unlinked_at }
  const [links, shares, endpoints] = await Promise.all([
    db
      .selectFrom('student_organisations')
      .select((eb) => eb.fn.countAll<string | number>().as('n'))
      .where('organisation_id', '=', organisationId)
      .executeTakeFirstOrThrow(),
    db
      .selectFrom('shares')
      .select((eb) => eb.fn.countAll<string | number>().as('n'))
      .where('organisation_id', '=', organisationId)
      .where('ended_at', 'is', null)
      .executeTakeFirstOrThrow(),
    db
      .selectFrom('webhook_endpoints')
      .select('events')
      .where('organisation_id', '=', organisationId)
      .where('status', '=', 'enabled')
      .execute(),
  ])
  return {
    kind: 'to_dispose',
    end,
    due: isDispositionDue(end, now),
    links: Number(links.n),
    shares: Number(shares.n),
    endpoints: endpoints.filter((e) => e.events.split(' ').includes('student.unlinked')).length,
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
    const agreements = await trx
      .selectFrom('agreements')
      .selectAll()
      .where('organisation_id', '=', organisationId)
      .execute()
    const end = currentEnd(agreements.map(disposable), now)
    if (end === undefined || end.agreement.id !== agreementId || !(early || isDispositionDue(end, now)))
      return undefined
    const students = (
      await trx
        .selectFrom('student_organisations')
        .select('student_id')
        .where('organisation_id', '=', organisationId)
        .orderBy('student_id')
        .execute()
    ).map((row) => row.student_id)
    const at = isoAt(now)
    const dispositionId = randomUUID()
    const claimed = await trx
      .insertInto('agreement_dispositions')
      .values({
        id: dispositionId,
        organisation_id: organisationId,
        agreement_id: agreementId,
        ended_at: end.endedAt,
        deletion_due_at: end.deletionDueAt,
        unlinked_at: at,
        students: students.length,
        shares_ended: 0,
      })
      .onConflict((oc) => oc.column('agreement_id').doNothing())
      .returning('id')
      .executeTakeFirst()
    if (claimed === undefined) return undefined
    for (let from = 0; from < students.length; from += CHUNK)
      await trx
        .insertInto('disposition_students')
        .values(students.slice(from, from + CHUNK).map((student_id) => ({ disposition_id: dispositionId, student_id })))
        .execute()
    const ended = await trx
      .updateTable('shares')
      .set({ ended_at: at })
      .where('organisation_id', '=', organisationId)
      .where('ended_at', 'is', null)
      .executeTakeFirst()
    const sharesEnded = Number(ended.numUpdatedRows)
    await trx
      .updateTable('agreement_dispositions')
      .set({ shares_ended: sharesEnded })
      .where('id', '=', dispositionId)
      .execute()
    await trx.deleteFrom('share_students').where('organisation_id', '=', organisationId).execute()
    // Last: numbering the notices holds the change counter until the commit (student-change-log.ts).
    const { webhooks } = await endUnsharedLinks(
      trx,
      students.map((studentId) => ({ studentId, organisationId })),
      now,
    )
    return { organisationId, agreementId, students: students.length, sharesEnded, webhooks }
  })
}
