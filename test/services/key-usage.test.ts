/**
 * The key-usage flush writes in chunks through the write queue: everything counted is written
 * once, chunk after chunk with neighbouring index entries together, other writes get in between
 * chunks, a failed chunk loses nothing, and a flush asked for while one runs also writes what
 * arrived meanwhile (the final flush on close).
 */
import { sql } from 'kysely'
import { beforeEach, describe, expect, it } from 'vitest'
import { ManualClock } from '../../src/clock.js'
import { KeyUsage, USAGE_CHUNK } from '../../src/services/key-usage.js'
import { createApiKey, createOrganisation, touchKeys } from '../../src/storage/access-repository.js'
import type { Storage } from '../../src/storage/connection.js'
import { usageOf } from '../../src/storage/usage-repository.js'
import type { WriteQueue } from '../../src/storage/write-queue.js'
import { createTestStorage } from '../helper.js'
import { perTest } from '../support/built.js'

/** More keys than two chunks hold, so that every test crosses chunk boundaries. */
const KEYS = 2 * USAGE_CHUNK + 7

describe('KeyUsage flush', () => {
  const storage = perTest(() => createTestStorage({ catalog: false }))
  let clock: ManualClock
  let keyIds: string[]

  beforeEach(async () => {
    clock = new ManualClock('2026-03-02T10:00:00.000Z')
    const organisation = await createOrganisation(storage.db, 'Usage Partner', clock.now())
    keyIds = []
    for (let i = 0; i < KEYS; i++) {
      const { row } = await createApiKey(
        storage.db,
        { organisationId: organisation.id, name: `k${i}`, scopes: [], expiresAt: null },
        clock.now(),
      )
      keyIds.push(row.id)
    }
  })

  const today = '2026-03-02'
  async function requestsByKey(): Promise<Map<string, number>> {
    const rows = await usageOf(storage.db, keyIds, today)
    return new Map(rows.map((row) => [row.keyId, row.requests]))
  }
  async function lastUsedByKey(): Promise<Map<string, string | null>> {
    const rows = await storage.db.selectFrom('api_keys').select(['id', 'last_used_at']).execute()
    return new Map(rows.map((row) => [row.id, row.last_used_at]))
  }

  it('writes every count and last-used time once, chunk after chunk, keys with alike ids together', async () => {
    // After each chunk commits: which keys have their count stored.
    const storedAfterChunk: string[][] = []
    const observed: WriteQueue = {
      transaction: (work) => storage.writes.transaction(work),
      async statement(work) {
        const result = await storage.writes.statement(work)
        const stored = await requestsByKey()
        storedAfterChunk.push(keyIds.filter((id) => stored.has(id)))
        return result
      },
    }
    const usage = new KeyUsage({ ...storage, writes: observed }, clock)
    for (const id of keyIds) usage.count(id, false)
    usage.count(keyIds[0]!, true)
    await usage.flush()

    const counts = await usageOf(storage.db, keyIds, today)
    expect(counts).toHaveLength(KEYS)
    for (const row of counts) expect(row.requests).toBe(row.keyId === keyIds[0] ? 2 : 1)
    expect(counts.find((row) => row.keyId === keyIds[0])!.throttled).toBe(1)
    const lastUsed = await lastUsedByKey()
    for (const id of keyIds) expect(lastUsed.get(id)).toBe(new Date(clock.now()).toISOString())

    // Last-used chunks come first (no counts yet), then counts, chunk after chunk; keys whose
    // ids begin alike (neighbours in the index) are written together, one run each.
    const chunks = Math.ceil(KEYS / USAGE_CHUNK)
    expect(storedAfterChunk).toHaveLength(2 * chunks)
    expect(storedAfterChunk.slice(0, chunks).every((stored) => stored.length === 0)).toBe(true)
    const chunkOf = new Map<string, number>()
    storedAfterChunk.slice(chunks).forEach((stored, i) => {
      for (const id of stored) if (!chunkOf.has(id)) chunkOf.set(id, i)
    })
    expect(chunkOf.size).toBe(KEYS)
    const perChunk = [...chunkOf.values()].reduce((n, i) => n.set(i, (n.get(i) ?? 0) + 1), new Map<number, number>())
    expect([...perChunk.values()]).toEqual([USAGE_CHUNK, USAGE_CHUNK, KEYS - 2 * USAGE_CHUNK])
    const runs = new Map<string, { first: number; last: number }>()
    for (const [id, i] of chunkOf) {
      const run = runs.get(id.slice(0, 2)) ?? { first: i, last: i }
      runs.set(id.slice(0, 2), { first: Math.min(run.first, i), last: Math.max(run.last, i) })
    }
    const ordered = [...runs.values()].sort((a, b) => a.first - b.first || a.last - b.last)
    for (let i = 1; i < ordered.length; i++) expect(ordered[i]!.first).toBeGreaterThanOrEqual(ordered[i - 1]!.last)
  })

  it("keeps every key's numbers apart when it makes room for more keys than it started with", async () => {
    // 1,024 keys fit the first arrays; the ones after them are counted in arrays made larger.
    const organisation = await createOrganisation(storage.db, 'Many Keys', clock.now())
    const many = await storage.db.transaction().execute(async (trx) => {
      const ids: string[] = []
      for (let i = 0; i < 1_100; i++) {
        const { row } = await createApiKey(
          trx,
          { organisationId: organisation.id, name: `m${i}`, scopes: [], expiresAt: null },
          clock.now(),
        )
        ids.push(row.id)
      }
      return ids
    })
    const usage = new KeyUsage(storage, clock)
    // Each key used a millisecond after the one before: its own last-used time.
    const usedAt = new Map<string, string>()
    many.forEach((id, i) => {
      clock.advance(1)
      usedAt.set(id, new Date(clock.now()).toISOString())
      for (let n = 0; n <= i % 3; n++) usage.count(id, n === 0 && i % 5 === 0, clock.now())
    })
    await usage.flush()
    const counts = new Map((await usageOf(storage.db, many, today)).map((row) => [row.keyId, row]))
    expect(counts.size).toBe(many.length)
    many.forEach((id, i) => {
      expect(counts.get(id)).toMatchObject({ requests: (i % 3) + 1, throttled: i % 5 === 0 ? 1 : 0 })
    })
    const lastUsed = await lastUsedByKey()
    for (const id of many) expect(lastUsed.get(id)).toBe(usedAt.get(id))
  })

  it('records the last-used times of more keys than one statement takes, each its own', async () => {
    const times = new Map(
      keyIds.map((id, i) => [id, { at: clock.now() + i * 1000, address: `10.0.0.${i}`, agent: 'curl' }]),
    )
    await touchKeys(storage.db, times)
    const lastUsed = await lastUsedByKey()
    for (const [id, { at }] of times) expect(lastUsed.get(id)).toBe(new Date(at).toISOString())
    const rows = await storage.db
      .selectFrom('api_keys')
      .select(['id', 'last_used_address', 'last_used_agent'])
      .execute()
    for (const row of rows.filter((r) => times.has(r.id))) {
      expect(row).toMatchObject({ last_used_address: times.get(row.id)!.address, last_used_agent: 'curl' })
    }
  })

  it('lets other writes commit between its chunks', async () => {
    const usage = new KeyUsage(storage, clock)
    for (const id of keyIds) usage.count(id, false)
    const order: string[] = []
    const flushed = usage.flush().then(() => order.push('flush'))
    // Queued after the flush began, like a request's disclosure record.
    const other = storage.writes
      .statement((db) => db.insertInto('settings').values({ name: 'between-chunks', value: 'x' }).execute())
      .then(() => order.push('other write'))
    await Promise.all([flushed, other])
    expect(order).toEqual(['other write', 'flush'])
    expect((await requestsByKey()).size).toBe(KEYS)
  })

  it('keeps what a failed chunk and the chunks after it held, and writes it on the next flush', async () => {
    const usage = new KeyUsage(storage, clock)
    for (const id of keyIds) usage.count(id, false)
    for (const id of keyIds) usage.count(id, true)
    // A real refusal by the database, for one key of the second count chunk.
    const refused = keyIds[USAGE_CHUNK + 3]!
    await refuseUsageOf(storage, refused)
    await expect(usage.flush()).rejects.toThrow(/usage write refused/)
    // The first count chunk went in; the refused key's chunk and the rest did not.
    expect((await requestsByKey()).size).toBeLessThan(KEYS)
    // Counted after the failure: joins what waits.
    usage.count(refused, false)
    await allowUsage(storage)
    await usage.flush()

    const counts = await usageOf(storage.db, keyIds, today)
    expect(counts).toHaveLength(KEYS)
    for (const row of counts) {
      expect(row.requests).toBe(row.keyId === refused ? 3 : 2)
      expect(row.throttled).toBe(1)
    }
  })

  it('writes, when asked during a flush, what was counted after that flush began', async () => {
    const usage = new KeyUsage(storage, clock)
    for (const id of keyIds.slice(0, USAGE_CHUNK)) usage.count(id, false)
    const first = usage.flush()
    clock.advance(1000)
    for (const id of keyIds) usage.count(id, false)
    // What close() does: the last flush must cover the requests just answered.
    await usage.flush()
    await first
    const counts = await requestsByKey()
    expect(counts.size).toBe(KEYS)
    for (const [id, requests] of counts) expect(requests).toBe(keyIds.indexOf(id) < USAGE_CHUNK ? 2 : 1)
  })
})

/** Makes the database refuse usage rows of one key, with a trigger of the engine in use. */
async function refuseUsageOf(storage: Storage, keyId: string): Promise<void> {
  if (storage.engine === 'sqlite') {
    await sql`create trigger refuse_usage before insert on usage_daily when new.key_id = ${sql.lit(keyId)}
      begin select raise(abort, 'usage write refused'); end`.execute(storage.db)
    return
  }
  await sql`create function refuse_usage() returns trigger language plpgsql as $$
      begin
        if new.key_id = ${sql.lit(keyId)} then raise exception 'usage write refused'; end if;
        return new;
      end $$`.execute(storage.db)
  await sql`create trigger refuse_usage before insert on usage_daily
      for each row execute function refuse_usage()`.execute(storage.db)
}

async function allowUsage(storage: Storage): Promise<void> {
  await sql`drop trigger refuse_usage${sql.raw(storage.engine === 'sqlite' ? '' : ' on usage_daily')}`.execute(
    storage.db,
  )
}
