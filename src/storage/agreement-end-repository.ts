/**
 * What partners and the operator see of agreements that ended: per ended agreement, when it
 * ended, the day the partner must have deleted the data by, whether the links have ended yet (the
 * disposition, cases/agreement-disposition.ts), how many students it covers and whether the partner
 * attested the deletion.
 *
 * An end covers every student shared with the organisation under it (deletion-list.ts): those
 * linked when the links ended (or now, while its period runs), and those whose link ended earlier
 * in its time, unlinked or erased, each of whom the partner was sent a notice about.
 */
import type { Kysely } from 'kysely'
import { isoAt } from '../clock.js'
import { coverageSince, currentEnd } from '../domain/disposition.js'
import { type AgreementOf, disposable } from './agreement-disposition-repository.js'
import type { AgreementRow, Database } from './tables.js'

type Db = Kysely<Database>

export interface AttestationView {
  attestedAt: string
  /** Students on the deletion list when it was attested; null for attestations recorded before this was kept. */
  students: number | null
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
  /** Students the partner must delete: `coverage.linked + coverage.unlinked + coverage.erased`. */
  students: number
  coverage: Coverage
  attestation: AttestationView | null
}

/** Whom an end covers, and over which time. */
export interface Coverage {
  /** The start of the first agreement whose data this end covers (domain/disposition.ts `coverageSince`). */
  since: string
  /**
   * Until, not including, when the links ended (the disposition's own notices are its `linked`);
   * while the period runs, just after the time the end was read.
   */
  until: string
  /** Linked when the links ended (or now, while the period runs): the disposition asks for these. */
  linked: number
  /** Unlinked earlier, each asked by its `student.unlinked` notice. */
  unlinked: number
  /** Erased earlier, each asked by its `student.deleted` notice; known by id only. */
  erased: number
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
      'd.students',
      'k.name as key_name',
      'k.display_prefix',
    ])
  if (organisationId !== undefined) query = query.where('d.organisation_id', '=', organisationId)
  const views = new Map<string, AttestationView>()
  for (const row of await query.execute())
    views.set(row.agreement_id, {
      attestedAt: row.attested_at,
      students: row.students === null ? null : Number(row.students),
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

/** Students whose link to the end's organisation ended within its coverage, not counting those still linked. */
async function departures(
  db: Db,
  end: Omit<AgreementEnd, 'students' | 'coverage'>,
  since: string,
  until: string,
): Promise<{ unlinked: number; erased: number }> {
  const row = await db
    .selectFrom('student_departures as dep')
    .select((eb) => [
      eb.fn.count<string | number>('dep.student_id').distinct().as('departed'),
      eb.fn
        .count<string | number>(
          eb.case().when('dep.event', '=', 'student.deleted').then(eb.ref('dep.student_id')).end(),
        )
        .distinct()
        .as('erased'),
    ])
    .where('dep.organisation_id', '=', end.organisationId)
    .where('dep.at', '>=', since)
    .where('dep.at', '<', until)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          end.disposition === null
            ? selectFrom('student_organisations as so')
                .select('so.student_id')
                .whereRef('so.student_id', '=', 'dep.student_id')
                .where('so.organisation_id', '=', end.organisationId)
            : selectFrom('disposition_students as ds')
                .select('ds.student_id')
                .whereRef('ds.student_id', '=', 'dep.student_id')
                .where('ds.disposition_id', '=', end.disposition.id),
        ),
      ),
    )
    .executeTakeFirstOrThrow()
  const erased = Number(row.erased)
  return { unlinked: Number(row.departed) - erased, erased }
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

  type Found = Omit<AgreementEnd, 'students' | 'coverage'> & { linked: number }
  const found: Found[] = dispositions.map((d) => ({
    organisationId: d.organisation_id,
    agreement: byId.get(d.agreement_id)!,
    endedAt: d.ended_at,
    deletionDueAt: d.deletion_due_at,
    disposition: { id: d.id, unlinkedAt: d.unlinked_at, sharesEnded: d.shares_ended },
    linked: d.students,
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
    found.push({
      organisationId: end.agreement.row.organisation_id,
      agreement: end.agreement.row,
      endedAt: end.endedAt,
      deletionDueAt: end.deletionDueAt,
      disposition: null,
      linked: counts.get(end.agreement.row.organisation_id) ?? 0,
      attestation: attested.get(end.agreement.id) ?? null,
    })

  const ends: AgreementEnd[] = []
  for (const { linked, ...end } of found) {
    const previous = dispositions
      .filter((d) => d.organisation_id === end.organisationId && d.ended_at < end.endedAt)
      .reduce<string | null>((latest, d) => (latest === null || d.unlinked_at > latest ? d.unlinked_at : latest), null)
    const since = coverageSince(byOrganisation.get(end.organisationId) ?? [], end.endedAt, previous)
    const until = end.disposition?.unlinkedAt ?? isoAt(now + 1)
    const { unlinked, erased } = await departures(db, end, since, until)
    ends.push({
      ...end,
      students: linked + unlinked + erased,
      coverage: { since, until, linked, unlinked, erased },
    })
  }
  return ends.sort((a, b) => (a.endedAt < b.endedAt ? 1 : a.endedAt > b.endedAt ? -1 : 0))
}
