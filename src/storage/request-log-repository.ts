/**
 * The request log's rows (migration 0026; what a row holds: request-log-batches.ts): appended in
 * batches by services/request-log.ts, read by request id for cases/request-log.ts (pages:
 * request-log-pages.ts), pruned by the retention pruner.
 */
import type { Kysely } from 'kysely'
import { requestIdTime } from '../domain/request-id.js'
import { preparedBySize } from './prepared-query.js'
import {
  decodeBatch,
  MAX_SPAN_MS,
  type RequestLogBatch,
  type RequestLogEntry,
  type StoredBatch,
} from './request-log-batches.js'
import type { Database } from './tables.js'

type Db = Kysely<Database>

export type { RequestLogBatch, RequestLogEntry } from './request-log-batches.js'

/** An entry and where it sits in the log, newest first: `id` is its time and request id. */
export type PlacedEntry = RequestLogEntry & { readonly id: string }

export function placed(entry: RequestLogEntry): PlacedEntry {
  return { ...entry, id: `${entry.at}.${entry.requestId}` }
}

/** A batch row as read (bigint columns come back as strings from PostgreSQL). */
export function storedBatch(row: Record<string, unknown>): StoredBatch {
  return {
    id: Number(row.id),
    organisationId: row.organisation_id as string,
    firstAt: Number(row.first_at),
    lastAt: Number(row.last_at),
    entries: Number(row.entries),
    statuses: Number(row.statuses),
    keyIds: row.key_ids as string,
    routes: row.routes as string,
    problems: row.problems as string,
    addresses: row.addresses as string,
    data: row.data as Uint8Array,
  }
}

const COLUMNS = 10
/** Batch rows per statement at most: few sizes are ever compiled (prepared-query.ts). */
export const REQUEST_LOG_ROWS_PER_STATEMENT = 64

const insertStatement = preparedBySize(
  (size) =>
    (db, ...args: (string | number | Uint8Array)[]) =>
      db.insertInto('request_log').values(
        Array.from({ length: size }, (_, i) => ({
          organisation_id: args[COLUMNS * i] as string,
          first_at: args[COLUMNS * i + 1] as number,
          last_at: args[COLUMNS * i + 2] as number,
          entries: args[COLUMNS * i + 3] as number,
          statuses: args[COLUMNS * i + 4] as number,
          key_ids: args[COLUMNS * i + 5] as string,
          routes: args[COLUMNS * i + 6] as string,
          problems: args[COLUMNS * i + 7] as string,
          addresses: args[COLUMNS * i + 8] as string,
          data: args[COLUMNS * i + 9] as Uint8Array,
        })),
      ),
)

/** Appends `batches` (REQUEST_LOG_ROWS_PER_STATEMENT at most) in one statement. */
export async function appendRequestLog(db: Db, batches: readonly RequestLogBatch[]): Promise<void> {
  if (batches.length === 0) return
  if (batches.length > REQUEST_LOG_ROWS_PER_STATEMENT) throw new RangeError('too many request-log batches at once')
  const args: (string | number | Uint8Array)[] = []
  for (const b of batches) {
    args.push(b.organisationId, b.firstAt, b.lastAt, b.entries, b.statuses)
    args.push(b.keyIds, b.routes, b.problems, b.addresses, b.data)
  }
  await insertStatement(batches.length)(db, ...args)
}

/**
 * The entry of `requestId`, in `organisations` only when given: found through the time the id
 * carries (domain/request-id.ts), among the few batches whose times span it.
 */
export async function requestLogEntry(
  db: Db,
  requestId: string,
  organisations?: readonly string[],
): Promise<PlacedEntry | undefined> {
  const id = requestId.toLowerCase()
  const at = requestIdTime(id)
  if (at === undefined) return undefined
  // A batch spans MAX_SPAN_MS at most: one that holds `at` ends within that much after it.
  let query = db
    .selectFrom('request_log')
    .selectAll()
    .where('last_at', '>=', at)
    .where('last_at', '<=', at + MAX_SPAN_MS)
    .where('first_at', '<=', at)
  if (organisations !== undefined) query = query.where('organisation_id', 'in', organisations)
  for (const row of await query.execute()) {
    const entry = decodeBatch(storedBatch(row)).find((entry) => entry.requestId === id)
    if (entry !== undefined) return placed(entry)
  }
  return undefined
}

/** Days the request log keeps an entry. */
export const REQUEST_LOG_DAYS = 7

/** Batch rows one prune statement deletes at most. */
export const REQUEST_LOG_PRUNE_BATCH = 100

/**
 * Deletes the batches whose every entry is older than `before` (ms), oldest first, a few at a time
 * through `write`; resolves to how many went. Safe on two instances at once.
 */
export async function pruneRequestLog(
  db: Db,
  options: {
    before: number
    write: <T>(work: (trx: Db) => Promise<T>) => Promise<T>
    batch?: number
    pause?: () => Promise<boolean>
  },
): Promise<number> {
  const { before, write, batch = REQUEST_LOG_PRUNE_BATCH, pause = async () => true } = options
  let deleted = 0
  for (;;) {
    const ids = (
      await db
        .selectFrom('request_log')
        .select('id')
        .where('last_at', '<', before)
        .orderBy('last_at')
        .limit(batch)
        .execute()
    ).map((row) => Number(row.id))
    if (ids.length === 0) return deleted
    if (deleted > 0 && !(await pause())) return deleted
    await write((trx) => trx.deleteFrom('request_log').where('id', 'in', ids).execute())
    deleted += ids.length
    if (ids.length < batch) return deleted
  }
}
