/**
 * The order in which to update many api_keys rows so that neighbouring rows go together.
 *
 * SQLite keeps a table's rows in rowid order and writes every page a transaction changed to the
 * write-ahead log. Fifty-odd keys picked at random sit on fifty-odd pages, so a flush of
 * last-used times in chunks wrote a page of log for nearly every key; in rowid order a chunk
 * shares a few pages and the same flush writes a fraction of that (and fewer log pages means
 * fewer checkpoints holding off writers; figures: docs/performance.md). PostgreSQL places rows
 * its own way: there the order is left as it is (`Storage.keysInRowOrder`).
 */
import { setImmediate as yieldToRequests } from 'node:timers/promises'
import { type Kysely, sql } from 'kysely'
import type { Database } from '../tables.js'

/** Ids per lookup: short reads, with requests served between them. */
const LOOKUP = 500

/**
 * `keyIds` ordered by where their rows sit (rowid on SQLite); ids with no row come last. A
 * counting sort over rowid ranges: no comparison sort, so no pause even for 50,000 ids.
 */
export async function inRowOrder(db: Kysely<Database>, keyIds: readonly string[]): Promise<string[]> {
  if (keyIds.length < 2) return [...keyIds]
  const found: string[] = []
  const rowids: number[] = []
  for (let start = 0; start < keyIds.length; start += LOOKUP) {
    const chunk = keyIds.slice(start, start + LOOKUP)
    const { rows } = await sql<{ id: string; position: number }>`
      select id, rowid as position from api_keys where id in (${sql.join(chunk)})`.execute(db)
    for (const row of rows) {
      found.push(row.id)
      rowids.push(row.position)
    }
    await yieldToRequests()
  }
  let highest = 0
  for (const rowid of rowids) highest = Math.max(highest, rowid)
  // Exact while the rows asked for are a quarter of the table or more; otherwise ranges of a
  // few rows (a few rows share a page anyway).
  const width = Math.max(1, Math.ceil((highest + 1) / (4 * found.length)))
  const ranges = Math.floor(highest / width) + 1
  const starts = new Int32Array(ranges + 1)
  for (const rowid of rowids) starts[Math.floor(rowid / width) + 1]!++
  for (let range = 0; range < ranges; range++) starts[range + 1]! += starts[range]!
  const ordered = new Array<string>(found.length)
  for (let i = 0; i < found.length; i++) ordered[starts[Math.floor(rowids[i]! / width)]!++] = found[i]!
  if (found.length < keyIds.length) {
    const placed = new Set(found)
    for (const keyId of keyIds) if (!placed.has(keyId)) ordered.push(keyId)
  }
  return ordered
}
