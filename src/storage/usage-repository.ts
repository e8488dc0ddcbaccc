/**
 * Requests per key per UTC day, and how many of them were answered 429. Counted in memory on
 * the request path and added here in batches; both engines add with one upsert.
 */
import { type Kysely, sql } from 'kysely'
import type { Database } from './tables.js'
import { preparedBySize } from './prepared-query.js'
import { inTransaction } from './transaction.js'

export interface DailyCount {
  keyId: string
  day: string
  requests: number
  throttled: number
}

/** Counts per statement at most: the flush's chunks (key-usage.ts) fit in one. */
const UPSERT_ROWS = 64

/**
 * The upsert of `size` daily counts; its arguments are each count's key, day, requests and
 * throttled requests. Compiled once per count of rows, as `touchKeys` is.
 */
const upsertStatement = preparedBySize(
  (size) =>
    (db, ...args: (string | number)[]) =>
      db
        .insertInto('usage_daily')
        .values(
          Array.from({ length: size }, (_, i) => ({
            key_id: args[4 * i] as string,
            day: args[4 * i + 1] as string,
            requests: args[4 * i + 2] as number,
            throttled: args[4 * i + 3] as number,
          })),
        )
        .onConflict((oc) =>
          oc.columns(['key_id', 'day']).doUpdateSet({
            requests: sql<number>`usage_daily.requests + excluded.requests`,
            throttled: sql<number>`usage_daily.throttled + excluded.throttled`,
          }),
        ),
)

export async function addUsage(db: Kysely<Database>, counts: readonly DailyCount[]): Promise<void> {
  if (counts.length === 0) return
  await inTransaction(db, async (trx) => {
    for (let i = 0; i < counts.length; i += UPSERT_ROWS) {
      const rows = counts.slice(i, i + UPSERT_ROWS)
      const args: (string | number)[] = []
      for (const count of rows) args.push(count.keyId, count.day, count.requests, count.throttled)
      await upsertStatement(rows.length)(trx, ...args)
    }
  })
}

/** Counts of the given keys from `sinceDay` (YYYY-MM-DD) on. */
export async function usageOf(
  db: Kysely<Database>,
  keyIds: readonly string[],
  sinceDay: string,
): Promise<DailyCount[]> {
  if (keyIds.length === 0) return []
  const rows = await db
    .selectFrom('usage_daily')
    .selectAll()
    .where('key_id', 'in', keyIds)
    .where('day', '>=', sinceDay)
    .orderBy('day')
    .execute()
  return rows.map((row) => ({
    keyId: row.key_id,
    day: row.day,
    requests: Number(row.requests),
    throttled: Number(row.throttled),
  }))
}
