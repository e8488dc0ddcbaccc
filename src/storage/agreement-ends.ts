/**
 * What partners and the operator see of agreements that ended: per ended agreement, when it
 * ended, the day the partner must have deleted the data by, whether the links have ended yet (the
 * disposition, agreement-dispositions.ts), how many students it concerns and whether the partner
 * attested the deletion. An end still within its period (no agreement in force, the disposition
 * to come) concerns the students linked now; a disposition, those linked when it ran.
 */
import type { Kysely } from 'kysely'
import { currentEnd } from '../domain/disposition.js'
import { type AgreementOf, disposable } from './agreement-dispositions.js'
import type { AgreementRow, Database } from './tables.js'

type Db = Kysely<Database>

export interface AttestationView {
  attestedAt: string
  accountId: string | null
  accountEmail: string | null
  keyId: string | null
  keyName: string | null
  keyPrefix: string | null
}

export interface AgreementEnd {
  organisationId: string
  agreement: AgreementRow
  endedAt: string
  deletionDueAt: string
  /** Set once the links have ended. */
  disposition: { id: string; unlinkedAt: string; sharesEnded: number } | null
  /** Students the partner must delete. */
  students: number
  attestation: AttestationView | null
}

async function attestations(db: Db, organisationId: string | undefined): Promise<Map<string, AttestationView>> {
  let query = db
    .selectFrom('deletion_attestations as d')
    .leftJoin('accounts as a', 'a.id', 'd.account_id')
    .leftJoin('api_keys as k', 'k.id', 'd.key_id')
    .select([
      'd.agreement_id',
      'd.attested_at',
      'd.account_id',
      'a.email',
      'd.key_id',
      'k.name as key_name',
      'k.display_prefix',
    ])
  if (organisationId !== undefined) query = query.where('d.organisation_id', '=', organisationId)
  const views = new Map<string, AttestationView>()
  for (const row of await query.execute())
    views.set(row.agreement_id, {
      attestedAt: row.attested_at,
      accountId: row.account_id,
      accountEmail: row.email,
      keyId: row.key_id,
      keyName: row.key_name,
      keyPrefix: row.display_prefix,
    })
  return views
}

/** Students linked now to each of `organisationIds`. */
async function linkCounts(db: Db, organisationIds: readonly string[]): Promise<Map<string, number>> {
  if (organisationIds.length === 0) return new Map()
  const rows = await db
    .selectFrom('student_organisations')
    .select(['organisation_id', (eb) => eb.fn.countAll<string | number>().as('n')])
    .where('organisation_id', 'in', organisationIds)
    .groupBy('organisation_id')
    .execute()
  return new Map(rows.map((row) => [row.organisation_id, Number(row.n)]))
}

/**
 * Every ended agreement of `organisationId` (of every partner organisation when left out) that
 * the partner must delete data for: those disposed of, and the end each organisation is in now
 * when its disposition is still to come. Latest end first.
 */
export async function agreementEnds(db: Db, now: number, organisationId?: string): Promise<AgreementEnd[]> {
  let agreementQuery = db
    .selectFrom('agreements as a')
    .innerJoin('organisations as o', 'o.id', 'a.organisation_id')
    .selectAll('a')
    .where('o.kind', '=', 'partner')
  if (organisationId !== undefined) agreementQuery = agreementQuery.where('a.organisation_id', '=', organisationId)
  const agreements = (await agreementQuery.execute()).map(disposable)
  let dispositionQuery = db.selectFrom('agreement_dispositions').selectAll()
  if (organisationId !== undefined) dispositionQuery = dispositionQuery.where('organisation_id', '=', organisationId)
  const dispositions = await dispositionQuery.execute()
  const attested = await attestations(db, organisationId)
  const byId = new Map(agreements.map((a) => [a.id, a.row]))

  const ends: AgreementEnd[] = dispositions.map((d) => ({
    organisationId: d.organisation_id,
    agreement: byId.get(d.agreement_id)!,
    endedAt: d.ended_at,
    deletionDueAt: d.deletion_due_at,
    disposition: { id: d.id, unlinkedAt: d.unlinked_at, sharesEnded: d.shares_ended },
    students: d.students,
    attestation: attested.get(d.agreement_id) ?? null,
  }))
  const disposed = new Set(dispositions.map((d) => d.agreement_id))
  const byOrganisation = new Map<string, AgreementOf[]>()
  for (const a of agreements)
    byOrganisation.set(a.row.organisation_id, [...(byOrganisation.get(a.row.organisation_id) ?? []), a])
  const pending = [...byOrganisation.values()]
    .map((list) => currentEnd(list, now))
    .filter((end) => end !== undefined && !disposed.has(end.agreement.id))
    .map((end) => end!)
  const counts = await linkCounts(
    db,
    pending.map((end) => end.agreement.row.organisation_id),
  )
  for (const end of pending)
    ends.push({
      organisationId: end.agreement.row.organisation_id,
      agreement: end.agreement.row,
      endedAt: end.endedAt,
      deletionDueAt: end.deletionDueAt,
      disposition: null,
      students: counts.get(end.agreement.row.organisation_id) ?? 0,
      attestation: attested.get(end.agreement.id) ?? null,
    })
  return ends.sort((a, b) => (a.endedAt < b.endedAt ? 1 : a.endedAt > b.endedAt ? -1 : 0))
}

/** The ids of the students `end` concerns, in id order. */
export async function endStudentIds(db: Db, end: AgreementEnd): Promise<string[]> {
  const rows =
    end.disposition === null
      ? await db
          .selectFrom('student_organisations')
          .select('student_id')
          .where('organisation_id', '=', end.organisationId)
          .orderBy('student_id')
          .execute()
      : await db
          .selectFrom('disposition_students')
          .select('student_id')
          .where('disposition_id', '=', end.disposition.id)
          .orderBy('student_id')
          .execute()
  return rows.map((row) => row.student_id)
}
