/**
 * The rows of an agreement's disposition (migration 0013, docs/end-of-agreement.md): the
 * disposition itself, unique per agreement, with the ids of the students linked when the links
 * ended, and the organisation's shares it ended. Carrying one out is cases/agreement-disposition.ts.
 */
import type { Kysely } from 'kysely'
import type { DisposableAgreement } from '../domain/disposition.js'
import type { AgreementRow, Database } from './tables.js'

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

/** Every partner organisation's agreements, by organisation. */
export async function partnerAgreements(db: Db): Promise<Map<string, AgreementOf[]>> {
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

/** The agreements whose disposition was carried out. */
export async function disposedAgreementIds(db: Db): Promise<Set<string>> {
  return new Set(
    (await db.selectFrom('agreement_dispositions').select('agreement_id').execute()).map((row) => row.agreement_id),
  )
}

/** One organisation's agreements, as the disposition rule reads them. */
export async function agreementsOf(db: Db, organisationId: string): Promise<AgreementOf[]> {
  const rows = await db.selectFrom('agreements').selectAll().where('organisation_id', '=', organisationId).execute()
  return rows.map(disposable)
}

/** When the links under `agreementId` ended, if its disposition was carried out. */
export async function dispositionUnlinkedAt(db: Db, agreementId: string): Promise<string | undefined> {
  const done = await db
    .selectFrom('agreement_dispositions')
    .select('unlinked_at')
    .where('agreement_id', '=', agreementId)
    .executeTakeFirst()
  return done?.unlinked_at
}

/** What disposing of `organisationId` would end now: its links, its shares in force, its enabled endpoints. */
export async function dispositionScope(db: Db, organisationId: string) {
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
  return { links: Number(links.n), shares: Number(shares.n), endpointEvents: endpoints.map((e) => e.events) }
}

/** The ids of the students linked to `organisationId`, in id order. */
export async function linkedStudentIds(db: Db, organisationId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('student_organisations')
    .select('student_id')
    .where('organisation_id', '=', organisationId)
    .orderBy('student_id')
    .execute()
  return rows.map((row) => row.student_id)
}

export interface NewDisposition {
  id: string
  organisationId: string
  agreementId: string
  endedAt: string
  deletionDueAt: string
  unlinkedAt: string
  /** The ids of the students linked when the links ended. */
  students: readonly string[]
}

/**
 * Writes the disposition and its students, unless the agreement has one already (another
 * instance's, committed first): false then, and nothing is written.
 */
export async function claimDisposition(trx: Db, disposition: NewDisposition): Promise<boolean> {
  const { id, students } = disposition
  const claimed = await trx
    .insertInto('agreement_dispositions')
    .values({
      id,
      organisation_id: disposition.organisationId,
      agreement_id: disposition.agreementId,
      ended_at: disposition.endedAt,
      deletion_due_at: disposition.deletionDueAt,
      unlinked_at: disposition.unlinkedAt,
      students: students.length,
      shares_ended: 0,
    })
    .onConflict((oc) => oc.column('agreement_id').doNothing())
    .returning('id')
    .executeTakeFirst()
  if (claimed === undefined) return false
  for (let from = 0; from < students.length; from += CHUNK)
    await trx
      .insertInto('disposition_students')
      .values(students.slice(from, from + CHUNK).map((student_id) => ({ disposition_id: id, student_id })))
      .execute()
  return true
}

/**
 * Ends every share of the disposition's organisation still in force at `at` and takes their
 * students out of them; records and returns how many shares ended.
 */
export async function endDisposedShares(
  trx: Db,
  disposition: { id: string; organisationId: string },
  at: string,
): Promise<number> {
  const ended = await trx
    .updateTable('shares')
    .set({ ended_at: at })
    .where('organisation_id', '=', disposition.organisationId)
    .where('ended_at', 'is', null)
    .executeTakeFirst()
  const sharesEnded = Number(ended.numUpdatedRows)
  await trx
    .updateTable('agreement_dispositions')
    .set({ shares_ended: sharesEnded })
    .where('id', '=', disposition.id)
    .execute()
  await trx.deleteFrom('share_students').where('organisation_id', '=', disposition.organisationId).execute()
  return sharesEnded
}
