/**
 * The disclosure log read oldest first, in batches, for reports and exports of any size: each
 * statement reads at most one batch after the last id read (keyset pagination over
 * `disclosures.id`), so memory does not grow with the log or the report. Like the log's pages
 * (disclosure-log.ts), it reads sealed segments through their lookups by student or
 * organisation, or their id ranges, and scans the unsealed tail by id.
 *
 * Order is id order, the order rows were written; a row's `at` is when its request began, so a
 * row may carry a time a moment before the row written just ahead of it.
 */
import type { Kysely } from 'kysely'
import { isoAt } from '../clock.js'
import { sealedUpTo } from './disclosure-log.js'
import { type DisclosureFilter, disclosureLookup, disclosureMatch } from './disclosure-filter-repository.js'
import type { Database, DisclosureRow } from './tables.js'

type Db = Kysely<Database>

/** What a report or an export reads: the log's own filter, and where an earlier read stopped. */
export type BatchFilter = Pick<DisclosureFilter, 'studentId' | 'organisationId' | 'schoolId' | 'since' | 'until'> & {
  /** Only rows after this id (continues an earlier read). */
  afterId?: number
}

/** Segments whose lookups one statement reads. */
const SEGMENT_GROUP = 256

/** Sealed segments that may hold matching rows, oldest first, and the last id any segment covers. */
async function sealedSegments(db: Db, filter: BatchFilter) {
  let query = db.selectFrom('disclosure_segments').select(['first_id', 'last_id'])
  if (filter.since !== undefined) query = query.where('last_at', '>=', isoAt(filter.since))
  if (filter.until !== undefined) query = query.where('first_at', '<', isoAt(filter.until))
  if (filter.afterId !== undefined) query = query.where('last_id', '>', filter.afterId)
  const rows = await query.orderBy('first_id').execute()
  return {
    segments: rows.map((row) => ({ first: Number(row.first_id), last: Number(row.last_id) })),
    sealedEnd: await sealedUpTo(db),
  }
}

/** Runs of consecutive segments as id ranges. */
function ranges(segments: readonly { first: number; last: number }[]): { first: number; last: number }[] {
  const out: { first: number; last: number }[] = []
  for (const segment of segments) {
    const previous = out.at(-1)
    if (previous !== undefined && previous.last + 1 === segment.first) previous.last = segment.last
    else out.push({ ...segment })
  }
  return out
}

function numbered(rows: DisclosureRow[]): DisclosureRow[] {
  for (const row of rows) row.id = Number(row.id)
  return rows
}

/**
 * `read(after)`'s rows a batch at a time, each batch read after the last id of the one before,
 * until one comes back short; returns the last id read (`after` itself when none was).
 */
async function* keysetBatches(
  after: number,
  batchRows: number,
  read: (after: number) => Promise<DisclosureRow[]>,
): AsyncGenerator<DisclosureRow[], number, undefined> {
  for (;;) {
    const rows = numbered(await read(after))
    if (rows.length > 0) {
      after = rows.at(-1)!.id
      yield rows
    }
    if (rows.length < batchRows) return after
  }
}

/**
 * Every matching row written before the call, oldest first, `batchRows` at a time (an empty
 * log or filter yields nothing). Rows written while it runs are left out, so a report
 * describes the log as it stood when it began.
 */
export async function* disclosureBatches(
  db: Db,
  filter: BatchFilter,
  batchRows = 1000,
): AsyncGenerator<DisclosureRow[], void, undefined> {
  // Segments first: a segment is sealed only once a later row exists, so every sealed id is below the newest.
  const { segments, sealedEnd } = await sealedSegments(db, filter)
  const newest = await db
    .selectFrom('disclosures')
    .select((eb) => eb.fn.max('id').as('id'))
    .executeTakeFirst()
  if (newest?.id === null || newest?.id === undefined) return
  const upTo = Number(newest.id)
  const lookup = disclosureLookup(filter)
  let cursor = filter.afterId ?? 0
  // The matching rows numbered in (after, last], by id, without the lookup's index.
  const idRange = (after: number, last: number) =>
    db
      .selectFrom('disclosures as d')
      .selectAll('d')
      .where('d.id', '>', after)
      .where('d.id', '<=', last)
      .where(disclosureMatch(filter))
      .orderBy('d.id')
      .limit(batchRows)
      .execute()

  if (lookup !== undefined) {
    for (let i = 0; i < segments.length; i += SEGMENT_GROUP) {
      const group = segments.slice(i, i + SEGMENT_GROUP).map((segment) => segment.first)
      cursor = yield* keysetBatches(cursor, batchRows, (after) =>
        db
          .selectFrom('disclosure_lookup as l')
          .innerJoin('disclosures as d', 'd.id', 'l.id')
          .selectAll('d')
          .where('l.segment', 'in', group)
          .where('l.dimension', '=', lookup.dimension)
          .where('l.value', '=', lookup.value)
          .where('l.id', '>', after)
          .where('l.id', '<=', upTo)
          .where(disclosureMatch(filter))
          .orderBy('l.id')
          .limit(batchRows)
          .execute(),
      )
    }
  } else {
    for (const range of ranges(segments)) {
      // Starting below the range changes nothing: every later range and the tail lie above it.
      cursor = yield* keysetBatches(Math.max(cursor, range.first - 1), batchRows, (after) =>
        idRange(after, Math.min(range.last, upTo)),
      )
    }
  }

  // The tail no segment covers yet, up to the newest row when the read began.
  yield* keysetBatches(Math.max(cursor, sealedEnd), batchRows, (after) => idRange(after, upTo))
}
