/**
 * Requests per key per UTC day, and how many of them were answered 429. Counted in memory on
 * the request path and added here in batches; both engines add with one upsert.
 */
import { type Kysely, sql } from 'kysely'
import type { Database } from './tables.js'
import { inTransaction } from './transaction.js'

export interface DailyCount {
  keyId: string
  day: string
  requests: number
  throttled: number
}

export async function addUsage(db: Kysely<Database>, counts: readonly DailyCount[]): Promise<void> {
  if (counts.length === 0) return
  await inTransaction(db, async (trx) => {
    for (let i = 0; i < counts.length; i += 500) {
      await trx
        .insertInto('usage_daily')
        .values(
          counts
            .slice(i, i + 500)
            .map((c) => ({ key_id: c.keyId, day: c.day, requests: c.requests, throttled: c.throttled })),
        )
        .onConflict((oc) =>
          oc.columns(['key_id', 'day']).doUpdateSet({
            requests: sql<number>`usage_daily.requests + excluded.requests`,
            throttled: sql<number>`usage_daily.throttled + excluded.throttled`,
          }),
        )
        .execute()
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
