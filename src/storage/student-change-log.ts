/**
 * The student change log (migrations 0006 and 0010): every change of a student's tier or of one
 * of their progress entries, and every notice to an organisation that a student was unlinked from
 * it or erased, numbered in commit order, so that a partner following it with a stored cursor
 * never misses a change and never gets one twice, whichever instance wrote it.
 *
 * Why the numbers are in commit order: a writer takes them from the `student_changes` row of
 * `meta` (`UPDATE ... SET version = version + n RETURNING version`) inside the transaction that
 * makes the change. The row stays locked until that transaction ends, so a second writer waits
 * there and gets the following numbers only once the first has committed (or rolled back, which
 * undoes its numbers too: no gaps). Whatever number a reader sees committed, every lower number
 * was committed before it. A PostgreSQL sequence would not do: it hands out numbers at insert
 * time, a transaction holding number 5 can commit after one holding 6, and a reader that read
 * up to 6 in between would never see 5. On SQLite, whose single writer commits one transaction
 * at a time, the counter gives the same order.
 *
 * The price: on PostgreSQL, writers of changes queue on that row from their bump to their
 * commit. Each writer therefore bumps it as its last statement but the log rows themselves.
 */
import { type CompiledQuery, type Kysely, PostgresAdapter, sql } from 'kysely'
import type { ProgressEntry } from '../domain/progress.js'
import type {
  NewStudentChange,
  NewStudentNotice,
  StudentChangeType,
  StudentNoticeType,
} from '../domain/student-change.js'
import type { TierId } from '../domain/tiers.js'
import { preparedQuery } from './prepared-query.js'
import type { Database } from './tables.js'

const COUNTER = 'student_changes'

/** Rows per INSERT at most: 12 values each, under SQLite's 32,766 and PostgreSQL's 65,535 parameters. */
const INSERT_CHUNK = 512

const COLUMNS = 12

const bumpCounter = preparedQuery((db, by: number) =>
  db
    .updateTable('meta')
    .set({ version: sql`version + ${by}` })
    .where('name', '=', COUNTER)
    .returning('version'),
)

const insertTierChange = preparedQuery((db, seq: number, studentId: string, changedAt: string, tier: TierId) =>
  db
    .insertInto('student_changes')
    .values({ seq, student_id: studentId, kind: 'tier_changed', changed_at: changedAt, tier }),
)

/**
 * PostgreSQL: the counter's bump and the log row in one statement (an UPDATE inside WITH, which
 * SQLite lacks). The counter row is held from the bump to the commit, and every writer of
 * changes queues on it, so one round trip fewer in that stretch is one fewer for each of them
 * (figures: docs/performance.md).
 */
const bumpAndInsertTierChange = preparedQuery((db, studentId: string, changedAt: string, tier: TierId) =>
  db
    .with('bumped', (w) =>
      w.updateTable('meta').set({ version: sql`version + 1` }).where('name', '=', COUNTER).returning('version'),
    )
    .insertInto('student_changes')
    .columns(['seq', 'student_id', 'kind', 'changed_at', 'tier'])
    .expression((eb) =>
      eb
        .selectFrom('bumped')
        .select([
          'bumped.version',
          sql<string>`${studentId}::text`.as('student_id'),
          sql.lit('tier_changed').as('kind'),
          sql<string>`${changedAt}::text`.as('changed_at'),
          sql<string>`${tier}::text`.as('tier'),
        ]),
    ),
)

/** A change as the values of one log row, in the order of the compiled INSERT's columns. */
function rowValues(seq: number, change: NewStudentChange | NewStudentNotice): (string | number | null)[] {
  if (change.type === 'tier_changed')
    return [seq, change.studentId, change.type, change.changedAt, change.tier, null, null, null, null, null, null, null]
  if (change.type === 'progress_updated') {
    const { entry } = change
    return [
      seq,
      change.studentId,
      change.type,
      change.changedAt,
      null,
      entry.lessonSlug,
      entry.status,
      entry.xp,
      entry.timeSeconds,
      entry.startedAt,
      entry.completedAt,
      null,
    ]
  }
  const none = [null, null, null, null, null, null, null]
  return [seq, change.studentId, change.type, change.changedAt, ...none, change.organisationId]
}

const compiledInserts = new WeakMap<object, Map<number, CompiledQuery>>()

/**
 * The INSERT of `rows` log rows, compiled once per engine and row count. An import writes
 * thousands of rows per transaction, and on SQLite that transaction holds the only write lock:
 * building the multi-row statement anew each time cost more than running it. Counts are
 * powers of two, so that a few statements are ever compiled.
 */
function insertStatement(db: Kysely<Database>, rows: number): CompiledQuery {
  const adapter = db.getExecutor().adapter
  let bySize = compiledInserts.get(adapter)
  if (bySize === undefined) compiledInserts.set(adapter, (bySize = new Map()))
  let query = bySize.get(rows)
  if (query === undefined) {
    const placeholder = {
      seq: 0,
      student_id: '',
      kind: 'tier_changed' as const,
      changed_at: '',
      tier: null,
      lesson_slug: null,
      status: null,
      xp: null,
      time_seconds: null,
      started_at: null,
      completed_at: null,
      organisation_id: null,
    }
    query = db
      .insertInto('student_changes')
      .values(Array.from({ length: rows }, () => placeholder))
      .compile()
    if (query.parameters.length !== rows * COLUMNS) throw new Error('student_changes insert: unexpected parameters')
    bySize.set(rows, query)
  }
  return query
}

/**
 * Appends `changes` to the log, numbered in the order given. Call it inside the transaction
 * that makes the changes, after every other write of that transaction (see the module comment:
 * the counter row is held from here to the commit, and taking other locks while holding it
 * could deadlock with a writer that holds them and waits for it).
 *
 * @example
 * await inTransaction(db, async (trx) => {
 *   await trx.updateTable('students').set({ tier: 'builder' }).where('id', '=', id).execute()
 *   await recordStudentChanges(trx, [{ type: 'tier_changed', studentId: id, tier: 'builder', changedAt }])
 * })
 */
export async function recordStudentChanges(
  trx: Kysely<Database>,
  changes: readonly (NewStudentChange | NewStudentNotice)[],
): Promise<void> {
  if (changes.length === 0) return
  // Outside a transaction the counter would commit before the rows, and a reader could pass
  // numbers whose rows it never saw.
  if (!trx.isTransaction) throw new Error('recordStudentChanges must run inside the transaction that makes the changes')
  if (changes.length === 1 && changes[0]!.type === 'tier_changed') {
    const change = changes[0]!
    if (trx.getExecutor().adapter instanceof PostgresAdapter) {
      await bumpAndInsertTierChange(trx, change.studentId, change.changedAt, change.tier)
      return
    }
    const [bumped] = await bumpCounter(trx, 1)
    await insertTierChange(trx, Number(bumped!.version), change.studentId, change.changedAt, change.tier)
    return
  }
  const [bumped] = await bumpCounter(trx, changes.length)
  let seq = Number(bumped!.version) - changes.length
  for (let from = 0; from < changes.length; ) {
    // The largest power of two that fits what is left, up to INSERT_CHUNK.
    const rows = Math.min(INSERT_CHUNK, 2 ** Math.floor(Math.log2(changes.length - from)))
    const parameters: (string | number | null)[] = []
    for (const change of changes.slice(from, from + rows)) parameters.push(...rowValues(++seq, change))
    await trx.executeQuery({ ...insertStatement(trx, rows), parameters })
    from += rows
  }
}

/** The number of the last change committed (0 for an empty log). */
export async function lastChangeSequence(db: Kysely<Database>): Promise<number> {
  const counter = await db.selectFrom('meta').select('version').where('name', '=', COUNTER).executeTakeFirstOrThrow()
  return Number(counter.version)
}

/** A change of a linked student's tier or progress. */
export interface StudentDataChange {
  sequence: number
  type: StudentChangeType
  studentId: string
  firstName: string
  changedAt: string
  tier?: TierId
  entry?: ProgressEntry
}

/** A notice that a student was unlinked from the reader's organisation, or erased: the id and the time only. */
export interface StudentNotice {
  sequence: number
  type: StudentNoticeType
  studentId: string
  changedAt: string
}

export type StudentChange = StudentDataChange | StudentNotice

export interface StudentChangePage {
  changes: StudentChange[]
  /** Where the next page starts: every change numbered up to it has been read or is not visible. */
  next: number
  /** True when changes past `next` are committed already: ask again at once. */
  hasMore: boolean
}

export interface ChangeReader {
  organisationId: string
  /** Test keys see sandbox students' changes only; live keys only real students'. */
  sandbox: boolean
}

/**
 * Numbers one page reads past at most, matching or not: a page of an organisation that owns a
 * small share of a large log costs a bounded scan, and says `hasMore` to continue.
 */
export const SCAN_WINDOW = 20_000

/** The numbers a page's queries read, (after, until], and how many rows each takes at most. */
interface Span {
  after: number
  until: number
  limit: number
}

/**
 * The changes after `after` of the students linked to the organisation now (and of the kind of
 * student the key may see), with the organisation's own notices, oldest first, at most `limit`,
 * looking at most `window` numbers ahead.
 *
 * The page ends at the last committed number when it holds fewer than `limit` changes: `head`
 * is read first, every number up to it is committed (see the module comment), so later pages
 * start past everything this one could have seen and nothing below `next` can appear later.
 * `now` answers no changes and the last committed number as `next`: following from there
 * misses nothing committed later. Undefined when `after` is past the last number: no cursor of
 * this log says that.
 *
 * Changes and notices are two queries over the same numbers, each taking its first `limit + 1`
 * rows: the first `limit + 1` of both together are among those, so merging them in number order
 * gives the page, and whether another row follows it.
 */
export async function pageStudentChanges(
  db: Kysely<Database>,
  reader: ChangeReader,
  after: number | 'now',
  limit: number,
  window = SCAN_WINDOW,
): Promise<StudentChangePage | undefined> {
  const head = await lastChangeSequence(db)
  if (after === 'now') return { changes: [], next: head, hasMore: false }
  if (after > head) return undefined
  const until = Math.min(head, after + window)
  if (until === after) return { changes: [], next: after, hasMore: false }
  const span = { after, until, limit: limit + 1 }
  const changes: StudentChange[] = [
    ...(await dataChanges(db, reader, span)),
    ...(await notices(db, reader, span)),
  ].sort((a, b) => a.sequence - b.sequence)
  const full = changes.length > limit
  if (full) changes.length = limit
  const next = full ? changes.at(-1)!.sequence : until
  return { changes, next, hasMore: full || until < head }
}

/** Changes of the data of students linked to the reader's organisation, numbered in the span. */
async function dataChanges(db: Kysely<Database>, reader: ChangeReader, span: Span): Promise<StudentDataChange[]> {
  // CROSS JOIN: SQLite then walks the log in number order and looks each student up, instead
  // of starting from the organisation's students and scanning the log once for each of them.
  // PostgreSQL plans the same conditions as an inner join.
  const rows = await db
    .selectFrom('student_changes as c')
    .crossJoin('student_organisations as so')
    .crossJoin('students as s')
    .select([
      'c.seq',
      'c.kind',
      'c.student_id',
      'c.changed_at',
      'c.tier',
      'c.lesson_slug',
      'c.status',
      'c.xp',
      'c.time_seconds',
      'c.started_at',
      'c.completed_at',
      's.first_name',
    ])
    .whereRef('so.student_id', '=', 'c.student_id')
    .where('so.organisation_id', '=', reader.organisationId)
    .whereRef('s.id', '=', 'c.student_id')
    .where('s.sandbox', '=', reader.sandbox ? 1 : 0)
    // A notice to another organisation about a student still linked to this one is not this one's.
    .where('c.organisation_id', 'is', null)
    .where('c.seq', '>', span.after)
    .where('c.seq', '<=', span.until)
    .orderBy('c.seq')
    .limit(span.limit)
    .execute()
  return rows.map((r): StudentDataChange => {
    const change: StudentDataChange = {
      sequence: Number(r.seq),
      type: r.kind as StudentChangeType,
      studentId: r.student_id,
      firstName: r.first_name,
      changedAt: r.changed_at,
    }
    if (r.kind === 'tier_changed') change.tier = r.tier!
    else
      change.entry = {
        lessonSlug: r.lesson_slug!,
        status: r.status!,
        xp: Number(r.xp),
        timeSeconds: Number(r.time_seconds),
        startedAt: r.started_at!,
        completedAt: r.completed_at,
      }
    return change
  })
}

/** The reader's organisation's notices numbered in the span. */
async function notices(db: Kysely<Database>, reader: ChangeReader, span: Span): Promise<StudentNotice[]> {
  const rows = await db
    .selectFrom('student_changes')
    .select(['seq', 'kind', 'student_id', 'changed_at'])
    .where('organisation_id', '=', reader.organisationId)
    .where('seq', '>', span.after)
    .where('seq', '<=', span.until)
    .orderBy('seq')
    .limit(span.limit)
    .execute()
  return rows.map((r) => ({
    sequence: Number(r.seq),
    type: r.kind as StudentNoticeType,
    studentId: r.student_id,
    changedAt: r.changed_at,
  }))
}
