/**
 * The disclosure log: one row per student-endpoint request that reached a student's data or
 * was refused it. It is the operator's record of who saw or changed which child's data, when,
 * and under which key, as student-privacy law expects. Rows are only ever added (and deleted by
 * whole sealed segments past a retention period, when one is set: disclosure-retention-repository.ts), and
 * every request that reaches or is refused a student's data writes its row here before it is
 * answered.
 *
 * Cost that does not grow with the log. A request only appends a row (the primary key is the
 * only index, and new ids land on its last page). The lookups by student, organisation and key
 * are built afterwards, per *segment* of consecutive ids (`sealSegments`): one INSERT ... SELECT
 * in key order per dimension, into a table whose primary key starts with the segment, so that
 * building them appends too. A query reads the sealed segments through their lookups, newest
 * first, and scans the unsealed tail by id: rows written a moment ago are always found.
 */
import { type Kysely, sql } from 'kysely'
import { isoAt } from '../clock.js'
import {
  DISCLOSURE_ACTIONS,
  DISCLOSURE_OUTCOMES,
  type DisclosureAction,
  type DisclosureOutcome,
} from '../domain/disclosure.js'
import { type DisclosureFilter, disclosureLookup, disclosureMatch } from './disclosure-filter-repository.js'
import type { Database, DisclosureRow } from './tables.js'
import { preparedQuery } from './prepared-query.js'
import { keysetPage } from './keyset-page.js'
import { recordDisclosures as announceDisclosures } from '../instrumentation/metrics-channels.js'

export { DISCLOSURE_ACTIONS, DISCLOSURE_OUTCOMES, type DisclosureAction, type DisclosureOutcome }

/** Who is asking, and when: the part of a disclosure record the request supplies. */
export interface DisclosureContext {
  readonly at: number
  readonly requestId: string
  readonly keyId: string
  readonly organisationId: string
}

const insertDisclosure = preparedQuery(
  (
    db,
    at: string,
    requestId: string,
    keyId: string,
    organisationId: string,
    studentId: string,
    action: DisclosureAction,
    outcome: DisclosureOutcome,
  ) =>
    db.insertInto('disclosures').values({
      at,
      request_id: requestId,
      key_id: keyId,
      organisation_id: organisationId,
      student_id: studentId,
      action,
      outcome,
    }),
)

export async function recordDisclosure(
  db: Kysely<Database>,
  context: DisclosureContext,
  studentId: string,
  action: DisclosureAction,
  outcome: DisclosureOutcome,
): Promise<void> {
  await insertDisclosure(
    db,
    isoAt(context.at),
    context.requestId,
    context.keyId,
    context.organisationId,
    studentId,
    action,
    outcome,
  )
  announceDisclosures(action, outcome, 1)
}

/** Rows per INSERT: 7 values each, well under SQLite's 32,766 parameters and PostgreSQL's 65,535. */
const INSERT_CHUNK = 500

/**
 * One row per student for a request that returned several students' data (a list), in as few
 * statements as possible; run it inside the transaction that reads the data, before answering.
 */
export async function recordDisclosures(
  db: Kysely<Database>,
  context: DisclosureContext,
  studentIds: readonly string[],
  action: DisclosureAction,
  outcome: DisclosureOutcome,
): Promise<void> {
  const at = isoAt(context.at)
  for (let from = 0; from < studentIds.length; from += INSERT_CHUNK) {
    await db
      .insertInto('disclosures')
      .values(
        studentIds.slice(from, from + INSERT_CHUNK).map((studentId) => ({
          at,
          request_id: context.requestId,
          key_id: context.keyId,
          organisation_id: context.organisationId,
          student_id: studentId,
          action,
          outcome,
        })),
      )
      .execute()
  }
  announceDisclosures(action, outcome, studentIds.length)
}

export type { DisclosureFilter } from './disclosure-filter-repository.js'

export interface DisclosurePage {
  /** Newest first (by id, which is the order rows were written in). */
  rows: DisclosureRow[]
  /** Pass as `before` for the next (older) page; null when there is none. */
  next: number | null
}

type Db = Kysely<Database>

/** Segments whose lookups are read by one statement at most; groups grow 1, 2, 4... while they find little. */
const MAX_GROUP = 512

/**
 * One page of the log, newest first. `before` (an id from `next`) continues an earlier page;
 * rows written since then do not shift it.
 */
export async function pageDisclosures(
  db: Db,
  filter: DisclosureFilter,
  limit: number,
  before?: number,
): Promise<DisclosurePage> {
  const want = limit + 1
  const segments = await overlappingSegments(db, filter, before)
  const sealedEnd = await sealedUpTo(db)
  const rows: DisclosureRow[] = await db
    .selectFrom('disclosures as d')
    .selectAll('d')
    .where(disclosureMatch(filter, before))
    .where('d.id', '>', sealedEnd)
    .orderBy('d.id', 'desc')
    .limit(want)
    .execute()
  const dimension = disclosureLookup(filter)
  let group = 1
  for (let i = 0; i < segments.length && rows.length < want; i += group, group = Math.min(group * 2, MAX_GROUP)) {
    const chosen = segments.slice(i, i + group)
    const found = rows.length
    if (dimension === undefined) {
      // Segments are contiguous, so a run of them is one primary-key range.
      const range = db
        .selectFrom('disclosures as d')
        .selectAll('d')
        .where(disclosureMatch(filter, before))
        .where('d.id', '>=', chosen.at(-1)!.first_id)
        .where('d.id', '<=', chosen[0]!.last_id)
      rows.push(
        ...(await range
          .orderBy('d.id', 'desc')
          .limit(want - found)
          .execute()),
      )
    } else {
      const looked = db
        .selectFrom('disclosure_lookup as l')
        .innerJoin('disclosures as d', 'd.id', 'l.id')
        .selectAll('d')
        .where(disclosureMatch(filter, before))
        .where(
          'l.segment',
          'in',
          chosen.map((segment) => segment.first_id),
        )
        .where('l.dimension', '=', dimension.dimension)
        .where('l.value', '=', dimension.value)
        .$if(before !== undefined, (q) => q.where('l.id', '<', before!))
      rows.push(
        ...(await looked
          .orderBy('l.id', 'desc')
          .limit(want - found)
          .execute()),
      )
    }
  }
  for (const row of rows) row.id = Number(row.id)
  return keysetPage(rows, limit)
}

/** The newest `limit` rows that match (a shortcut over `pageDisclosures`). */
export async function listDisclosures(
  db: Db,
  filter: DisclosureFilter & { limit?: number } = {},
): Promise<DisclosureRow[]> {
  const { limit = 1000, ...rest } = filter
  return (await pageDisclosures(db, rest, limit)).rows
}

/** Sealed segments that may hold matching rows, newest first. */
async function overlappingSegments(db: Db, filter: DisclosureFilter, before: number | undefined) {
  let query = db.selectFrom('disclosure_segments').select(['first_id', 'last_id'])
  if (before !== undefined) query = query.where('first_id', '<', before)
  if (filter.since !== undefined) query = query.where('last_at', '>=', isoAt(filter.since))
  if (filter.until !== undefined) query = query.where('first_at', '<', isoAt(filter.until))
  const rows = await query.orderBy('first_id', 'desc').execute()
  return rows.map((row) => ({ first_id: Number(row.first_id), last_id: Number(row.last_id) }))
}

/** The last id covered by a sealed segment (0 before the first). */
export async function sealedUpTo(db: Db): Promise<number> {
  const newest = await db
    .selectFrom('disclosure_segments')
    .select('last_id')
    .orderBy('first_id', 'desc')
    .limit(1)
    .executeTakeFirst()
  return newest === undefined ? 0 : Number(newest.last_id)
}

function firstRowAfter(db: Db, id: number) {
  return db
    .selectFrom('disclosures')
    .select(['id', 'at'])
    .where('id', '>', id)
    .orderBy('id')
    .limit(1)
    .executeTakeFirst()
}

async function recordSegment(trx: Db, start: number, last: number, now: number): Promise<void> {
  const stats = await trx
    .selectFrom('disclosures')
    .select((eb) => [
      eb.fn.countAll<number | string>().as('rows'),
      eb.fn.min('at').as('first_at'),
      eb.fn.max('at').as('last_at'),
    ])
    .where('id', '>=', start)
    .where('id', '<=', last)
    .executeTakeFirstOrThrow()
  await trx
    .insertInto('disclosure_segments')
    .values({
      first_id: start,
      last_id: last,
      first_at: stats.first_at,
      last_at: stats.last_at,
      rows: Number(stats.rows),
      sealed_at: isoAt(now),
    })
    .onConflict((oc) => oc.doNothing())
    .execute()
}

const DIMENSIONS = [
  ['s', 'student_id'],
  ['o', 'organisation_id'],
  ['k', 'key_id'],
] as const

export interface SealOptions {
  /** Ids per segment. */
  segmentRows: number
  /**
   * How old the first row after a segment must be before the segment is sealed. PostgreSQL
   * hands out ids before commit, so a row with a lower id may still be committing; 0 on SQLite,
   * whose single writer commits in id order.
   */
  horizonMs: number
  now: number
  /** Request-time writes, so that on SQLite sealing joins the shared commits instead of waiting for the lock. */
  write: <T>(work: (trx: Db) => Promise<T>) => Promise<T>
  /**
   * Awaited between two writes; false ends the run there (the next run goes on from the last
   * sealed segment). On SQLite each write holds the event loop, and back to back a segment's
   * three writes and the commits queued behind them stalled requests under load (figures:
   * docs/performance.md).
   */
  pause?: () => Promise<boolean>
}

/**
 * Seals every complete segment after the last sealed one, oldest first; returns how many.
 * Idempotent: instances racing to seal the same segment write the same rows, and the
 * segment's own row, written last in the same transaction, is what makes it visible to queries.
 */
export async function sealSegments(db: Db, options: SealOptions): Promise<number> {
  let sealed = 0
  let written = false
  for (;;) {
    const first = await firstRowAfter(db, await sealedUpTo(db))
    if (first === undefined) return sealed
    const start = Number(first.id)
    const last = start + options.segmentRows - 1
    const after = await firstRowAfter(db, last)
    if (after === undefined || options.now - Date.parse(after.at) < options.horizonMs) return sealed
    // One write per dimension: on SQLite each holds the single writer, and request writes are
    // committed in between. The segment's row comes with the last one.
    for (const [index, [dimension, column]] of DIMENSIONS.entries()) {
      if (written && options.pause !== undefined && !(await options.pause())) return sealed
      written = true
      await options.write(async (trx) => {
        // In key order, so that the rows land one after another at the end of the lookup's B-tree.
        await sql`insert into disclosure_lookup (segment, dimension, value, id)
          select ${start}, ${dimension}, ${sql.ref(column)}, id from disclosures
          where id between ${start} and ${last} order by 3, 4
          on conflict do nothing`.execute(trx)
        if (index === DIMENSIONS.length - 1) await recordSegment(trx, start, last, options.now)
      })
    }
    sealed++
  }
}
