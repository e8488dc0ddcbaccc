/**
 * The students an ended agreement covers, each with how its deletion was asked: the list the
 * partner's "Data to delete" download, its attestation and the certificate of deletion all speak
 * of (agreement-end-repository.ts says whom and counts them).
 *
 * Every student shared with the organisation within the end's coverage is on it: those linked
 * when the links ended (the disposition asked for them, with a `student.unlinked` notice each),
 * and those whose link ended earlier, asked by the `student.unlinked` or `student.deleted` notice
 * sent then (student-departure-repository.ts). Every disclosure needs a link, and every link that ends
 * sends a notice, so whoever the partner received data about under the agreement is here.
 *
 * Read a page at a time in id order, after the last id of the page before: a district-sized list
 * never sits in memory whole.
 */
import type { Kysely } from 'kysely'
import { NOTICE_EVENTS, type NoticeEvent } from '../domain/webhook-events.js'
import type { AgreementEnd } from './agreement-end-repository.js'
import type { Database } from './tables.js'

type Db = Kysely<Database>

/** How the partner was asked to delete a student's data. */
export type AskedBy = 'disposition' | NoticeEvent

/**
 * What became of the webhook of that notice: delivered to an endpoint of the organisation, still
 * being tried, failed for good, or none subscribed (the change feed carried the notice alone).
 */
export type NoticeDelivery = 'delivered' | 'pending' | 'failed' | 'no_endpoint'

export interface DeletionEntry {
  studentId: string
  askedBy: AskedBy
  /** When it was asked; null for a disposition still to come. */
  askedAt: string | null
  /** Null for a disposition still to come. */
  webhook: NoticeDelivery | null
}

export const DELETION_PAGE = 1000

/** Of several deliveries of one notice (one per endpoint), the best outcome. */
function delivery(states: readonly string[] | undefined): NoticeDelivery {
  if (states === undefined || states.length === 0) return 'no_endpoint'
  if (states.includes('delivered')) return 'delivered'
  if (states.includes('pending')) return 'pending'
  return 'failed'
}

/** The ids of one page of those linked at the end (or now), after `after`. */
async function linkedPage(db: Db, end: AgreementEnd, after: string, limit: number): Promise<string[]> {
  const rows =
    end.disposition === null
      ? await db
          .selectFrom('student_organisations')
          .select('student_id')
          .where('organisation_id', '=', end.organisationId)
          .where('student_id', '>', after)
          .orderBy('student_id')
          .limit(limit)
          .execute()
      : await db
          .selectFrom('disposition_students')
          .select('student_id')
          .where('disposition_id', '=', end.disposition.id)
          .where('student_id', '>', after)
          .orderBy('student_id')
          .limit(limit)
          .execute()
  return rows.map((row) => row.student_id)
}

/** The ids of one page of those who left the organisation within the coverage, after `after`. */
async function departedPage(db: Db, end: AgreementEnd, after: string, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('student_departures')
    .select('student_id')
    .distinct()
    .where('organisation_id', '=', end.organisationId)
    .where('student_id', '>', after)
    .where('at', '>=', end.coverage.since)
    .where('at', '<', end.coverage.until)
    .orderBy('student_id')
    .limit(limit)
    .execute()
  return rows.map((row) => row.student_id)
}

/** The first `limit` ids of two ascending lists of ids, each read `limit` long, once each. */
function merged(a: readonly string[], b: readonly string[], limit: number): string[] {
  const out: string[] = []
  let i = 0
  let j = 0
  while (out.length < limit && (i < a.length || j < b.length)) {
    const next = j >= b.length || (i < a.length && a[i]! <= b[j]!) ? a[i++]! : b[j++]!
    if (out.at(-1) !== next) out.push(next)
  }
  return out
}

/** One page of the list: up to `limit` students after `after` in id order, described. */
export async function deletionPage(
  db: Db,
  end: AgreementEnd,
  after: string,
  limit = DELETION_PAGE,
): Promise<DeletionEntry[]> {
  const linked = await linkedPage(db, end, after, limit)
  const ids = merged(linked, await departedPage(db, end, after, limit), limit)
  if (ids.length === 0) return []
  const isLinked = new Set(linked)
  const departed = ids.filter((id) => !isLinked.has(id))
  const latest = new Map<string, { event: NoticeEvent; at: string }>()
  if (departed.length > 0)
    for (const row of await db
      .selectFrom('student_departures')
      .select(['student_id', 'event', 'at'])
      .where('organisation_id', '=', end.organisationId)
      .where('student_id', 'in', departed)
      .where('at', '>=', end.coverage.since)
      .where('at', '<', end.coverage.until)
      .execute()) {
      const known = latest.get(row.student_id)
      if (known === undefined || row.at > known.at) latest.set(row.student_id, { event: row.event, at: row.at })
    }
  const states = new Map<string, string[]>()
  for (const row of await db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
    .select(['d.student_id', 'd.event_type', 'd.created_at', 'd.state'])
    .where('e.organisation_id', '=', end.organisationId)
    .where('d.student_id', 'in', ids)
    .where('d.event_type', 'in', NOTICE_EVENTS)
    .execute()) {
    const key = `${row.student_id} ${row.event_type} ${row.created_at}`
    states.set(key, [...(states.get(key) ?? []), row.state])
  }
  const unlinkedAt = end.disposition?.unlinkedAt ?? null
  return ids.map((studentId): DeletionEntry => {
    if (isLinked.has(studentId))
      return {
        studentId,
        askedBy: 'disposition',
        askedAt: unlinkedAt,
        webhook: unlinkedAt === null ? null : delivery(states.get(`${studentId} student.unlinked ${unlinkedAt}`)),
      }
    const notice = latest.get(studentId)!
    return {
      studentId,
      askedBy: notice.event,
      askedAt: notice.at,
      webhook: delivery(states.get(`${studentId} ${notice.event} ${notice.at}`)),
    }
  })
}

/** The whole list, a page at a time, in id order. */
export async function* deletionList(
  db: Db,
  end: AgreementEnd,
  pageSize = DELETION_PAGE,
): AsyncGenerator<DeletionEntry[], void, undefined> {
  let after = ''
  for (;;) {
    const page = await deletionPage(db, end, after, pageSize)
    if (page.length > 0) yield page
    if (page.length < pageSize) return
    after = page.at(-1)!.studentId
  }
}
