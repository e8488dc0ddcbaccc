/**
 * The limit on what a partner sends by hand (test events and resends): at most
 * `MANUAL_SENDS.limit` per endpoint in any window of `MANUAL_SENDS.windowMs`. Counted in
 * storage, so that it holds across instances, with or without Redis.
 */
import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import { isoAt } from '../clock.js'
import { MANUAL_SENDS } from '../domain/webhook-events.js'
import type { Database } from './tables.js'

/**
 * Takes one of the endpoint's manual sends: resolves to 0 when taken, otherwise to the ms until
 * one is free again. Run it inside a transaction, with the send it stands for.
 */
export async function takeManualSend(trx: Kysely<Database>, endpointId: string, now: number): Promise<number> {
  // Count and insert must be one step, or two sends at 9 of 10 both pass. This no-op update
  // locks the endpoint's row until commit on PostgreSQL; SQLite transactions run one at a time.
  await trx
    .updateTable('webhook_endpoints')
    .set((eb) => ({ status: eb.ref('status') }))
    .where('id', '=', endpointId)
    .execute()
  const windowStart = isoAt(now - MANUAL_SENDS.windowMs)
  await trx
    .deleteFrom('webhook_manual_sends')
    .where('endpoint_id', '=', endpointId)
    .where('at', '<=', windowStart)
    .execute()
  const held = await trx
    .selectFrom('webhook_manual_sends')
    .select((eb) => [eb.fn.countAll<number | string>().as('count'), eb.fn.min('at').as('oldest')])
    .where('endpoint_id', '=', endpointId)
    .executeTakeFirstOrThrow()
  if (Number(held.count) >= MANUAL_SENDS.limit) {
    return Math.max(1, Date.parse(held.oldest!) + MANUAL_SENDS.windowMs - now)
  }
  await trx
    .insertInto('webhook_manual_sends')
    .values({ id: randomUUID(), endpoint_id: endpointId, at: isoAt(now) })
    .execute()
  return 0
}
