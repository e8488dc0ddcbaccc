/**
 * Pages of the request log, newest first by each entry's own time (then request id), whatever
 * batch holds it: batches are read by their last entry's time, newest first, and an entry is
 * given out once no batch still unread can hold a newer one (none ends after the next one read).
 * A partner's organisations are read apart, each through its part of the index, and merged.
 */
import { type Kysely, type RawBuilder, type SqlBool, sql } from 'kysely'
import { keysetPage } from './keyset-page.js'
import { decodeBatch, MAX_SPAN_MS, type RequestLogEntry } from './request-log-batches.js'
import { type PlacedEntry, placed, storedBatch } from './request-log-repository.js'
import type { Database } from './tables.js'

type Db = Kysely<Database>

/** Which entries a page shows. */
export interface RequestLogFilter {
  /** Only these organisations' (a partner's own); every organisation's when undefined. */
  organisations?: readonly string[]
  keyId?: string
  /** 2 for 2xx, and so on. */
  statusClass?: number
  problem?: string
  route?: string
}

export interface RequestLogPage {
  entries: PlacedEntry[]
  /** Where the next (older) page starts (`before`); null when there are no older entries. */
  next: string | null
}

/** Batches read at a time. */
const READ_BATCHES = 32
/** Batches one page reads at most: past that, the page ends there and its `next` goes on from it. */
const SCAN_BATCHES = 4096
/** After every request id in the order of positions: a position of this id stands for all of its millisecond. */
const WHOLE_MILLISECOND = '~'

interface Position {
  at: number
  requestId: string
}

function positionOf(id: string | undefined): Position | undefined {
  const match = id === undefined ? null : /^(\d{1,15})\.([0-9a-f-]{36}|~)$/.exec(id)
  return match === null ? undefined : { at: Number(match[1]), requestId: match[2]! }
}

const idOf = (position: Position) => `${position.at}.${position.requestId}`

/** Newest first: negative when `a` comes before `b`. */
function order(a: Position, b: Position): number {
  return b.at - a.at || (a.requestId < b.requestId ? 1 : a.requestId > b.requestId ? -1 : 0)
}

function matches(entry: RequestLogEntry, filter: RequestLogFilter, before: Position | undefined): boolean {
  return (
    (before === undefined || order(entry, before) > 0) &&
    (filter.keyId === undefined || entry.keyId === filter.keyId) &&
    (filter.statusClass === undefined || Math.floor(entry.status / 100) === filter.statusClass) &&
    (filter.problem === undefined || entry.problem === filter.problem) &&
    (filter.route === undefined || entry.route === filter.route)
  )
}

/**
 * What a batch that may hold a match has in its columns: batches that cannot are passed over
 * before any is decoded. (LIKE's `_` matches any character: a code's underscore lets through at
 * most a batch that `matches` then turns down.)
 */
function mayMatch(filter: RequestLogFilter): RawBuilder<SqlBool>[] {
  const conditions: RawBuilder<SqlBool>[] = []
  if (filter.keyId !== undefined) conditions.push(sql`(' ' || key_ids || ' ') like ${`% ${filter.keyId} %`}`)
  if (filter.statusClass !== undefined) conditions.push(sql`(statuses & ${1 << filter.statusClass}) <> 0`)
  if (filter.problem !== undefined) conditions.push(sql`(' ' || problems || ' ') like ${`% ${filter.problem} %`}`)
  // Each line is "METHOD route"; the last gets its newline here.
  if (filter.route !== undefined) conditions.push(sql`(routes || ${'\n'}) like ${`% ${filter.route}\n%`}`)
  return conditions
}

/**
 * One organisation's matching entries (or every organisation's) older than `before`, newest first.
 * Returns, when it stopped after SCAN_BATCHES batches, the position it got to.
 */
async function* scan(
  db: Db,
  organisationId: string | undefined,
  filter: RequestLogFilter,
  before: Position | undefined,
): AsyncGenerator<PlacedEntry, Position | undefined> {
  const pending: PlacedEntry[] = []
  // The last batch read, by (last_at, id): the next read starts below it.
  let below: { lastAt: number; id: number } | undefined
  for (let read = 0; read < SCAN_BATCHES; read += READ_BATCHES) {
    let query = db.selectFrom('request_log').selectAll()
    for (const condition of mayMatch(filter)) query = query.where(condition)
    if (organisationId !== undefined) query = query.where('organisation_id', '=', organisationId)
    // A batch ending later than that holds nothing older than `before`.
    if (before !== undefined) query = query.where('last_at', '<=', before.at + MAX_SPAN_MS)
    if (below !== undefined) query = query.where(sql<SqlBool>`(last_at, id) < (${below.lastAt}, ${below.id})`)
    const rows = await query.orderBy('last_at', 'desc').orderBy('id', 'desc').limit(READ_BATCHES).execute()
    for (const row of rows) {
      const batch = storedBatch(row)
      while (pending.length > 0 && pending[0]!.at > batch.lastAt) yield pending.shift()!
      for (const entry of decodeBatch(batch)) if (matches(entry, filter, before)) pending.push(placed(entry))
      pending.sort(order)
      below = { lastAt: batch.lastAt, id: batch.id }
    }
    if (rows.length < READ_BATCHES) {
      yield* pending
      return undefined
    }
  }
  // Unread batches end at `below.lastAt` or before: what is newer is complete.
  while (pending.length > 0 && pending[0]!.at > below!.lastAt) yield pending.shift()!
  return { at: below!.lastAt, requestId: WHOLE_MILLISECOND }
}

/** A page of `limit` entries matching `filter`, newest first, older than `before` (a `next` of an earlier page). */
export async function pageRequestLog(
  db: Db,
  filter: RequestLogFilter,
  limit: number,
  before?: string,
): Promise<RequestLogPage> {
  const from = positionOf(before)
  const sources = (filter.organisations ?? [undefined]).map((organisationId) => scan(db, organisationId, filter, from))
  const heads = await Promise.all(sources.map((source) => source.next()))
  const entries: PlacedEntry[] = []
  while (entries.length <= limit) {
    let best: number | undefined
    for (let i = 0; i < heads.length; i++) {
      const head = heads[i]!
      if (head.done !== true && (best === undefined || order(head.value, heads[best]!.value as PlacedEntry) < 0))
        best = i
    }
    if (best === undefined) break
    entries.push(heads[best]!.value as PlacedEntry)
    heads[best] = await sources[best]!.next()
  }
  // A source that stopped early may hold more entries older than its stop: the page ends there.
  let stopped: Position | undefined
  for (const head of heads)
    if (head.done === true && head.value !== undefined && (stopped === undefined || order(head.value, stopped) < 0))
      stopped = head.value
  const complete = stopped === undefined ? entries : entries.filter((entry) => order(entry, stopped) < 0)
  const page = keysetPage(complete, limit)
  return { entries: page.rows, next: page.next ?? (stopped === undefined ? null : idOf(stopped)) }
}
