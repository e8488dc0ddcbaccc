/**
 * Key ids put in the order their rows sit in (rowid on SQLite, so that a chunk of updates
 * shares pages); ids with no row last; PostgreSQL's order left as given.
 */
import { randomUUID } from 'node:crypto'
import { beforeEach, describe, expect, it } from 'vitest'
import { createOrganisation } from '../../src/storage/access-repository.js'
import { createTestStorage } from '../helper.js'
import { perTest } from '../support/built.js'

/** More than one lookup's worth (500), so that the order spans lookups. */
const KEYS = 1200

describe('keysInRowOrder', () => {
  const storage = perTest(() => createTestStorage({ catalog: false }))
  let inserted: string[]
  beforeEach(async () => {
    const organisation = await createOrganisation(storage.db, 'Row Order', Date.now())
    inserted = Array.from({ length: KEYS }, () => randomUUID())
    for (let start = 0; start < KEYS; start += 200) {
      await storage.db
        .insertInto('api_keys')
        .values(
          inserted.slice(start, start + 200).map((id) => ({
            id,
            organisation_id: organisation.id,
            name: 'k',
            display_prefix: 'cur_live_abcdef',
            key_hash: `hash-${id}`,
            scopes: '',
            mode: 'live',
            created_at: '2026-03-02T09:00:00.000Z',
            expires_at: null,
            revoked_at: null,
            last_used_at: null,
            created_by: null,
          })),
        )
        .execute()
    }
  })

  it('orders ids by where their rows sit, ids without a row last', async () => {
    const unknown = randomUUID()
    const asked = [unknown, ...[...inserted].sort()]
    const ordered = await storage.keysInRowOrder(asked)
    expect(new Set(ordered)).toEqual(new Set(asked))
    expect(ordered).toHaveLength(asked.length)
    if (storage.engine === 'sqlite') {
      // Inserted one after another: rowid order is insertion order.
      expect(ordered).toEqual([...inserted, unknown])
    } else {
      expect(ordered).toEqual(asked)
    }
  })
})
