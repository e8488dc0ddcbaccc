/**
 * Named locks a transaction holds to its end (`Storage.locks`): the webhook claim's "one claimer
 * per endpoint". On PostgreSQL a key another transaction holds is skipped, not waited for, until
 * that transaction ends; on SQLite a writing transaction runs alone and holds every key.
 */
import { describe, expect, it } from 'vitest'
import { createTestStorage } from '../helper.js'
import { perTest } from '../support/built.js'

describe('transaction locks', () => {
  const storage = perTest(() => createTestStorage({ catalog: false }))

  it('give a transaction the keys no other transaction holds, until it ends', async () => {
    const { locks } = storage
    const seen = await storage.writes.transaction(async (first) => {
      const held = await locks.tryLock(first, 'test-lock:', ['a', 'b'])
      if (storage.engine === 'sqlite') return { held }
      // Another connection's transaction, while the first still holds its keys.
      const beside = await storage.db.transaction().execute((other) => locks.tryLock(other, 'test-lock:', ['b', 'c']))
      // The same key under another scope is another lock.
      const elsewhere = await storage.db
        .transaction()
        .execute((other) => locks.tryLock(other, 'other-lock:', ['a', 'b']))
      return { held, beside, elsewhere }
    })
    if (storage.engine === 'sqlite') {
      expect(seen).toEqual({ held: ['a', 'b'] })
    } else {
      expect(seen).toEqual({ held: ['a', 'b'], beside: ['c'], elsewhere: ['a', 'b'] })
    }
    // Released at commit.
    const after = await storage.writes.transaction((trx) => locks.tryLock(trx, 'test-lock:', ['a', 'b', 'c']))
    expect(after).toEqual(['a', 'b', 'c'])
    expect(await storage.writes.transaction((trx) => locks.tryLock(trx, 'test-lock:', []))).toEqual([])
  })
})
