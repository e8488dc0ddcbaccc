/**
 * The request log as stored: entries go in as batches (one row per organisation and flush) and come
 * back with every field, newest first, paged by key across batches; filters are exact; a partner's
 * organisations are the only ones it reads; a request id finds its entry through the time it
 * carries; pruning takes what is older than 7 days, a few batches at a time.
 */
import { Writable } from 'node:stream'
import { pino } from 'pino'
import { describe, expect, it } from 'vitest'
import { ManualClock } from '../../src/clock.js'
import type { KeyRecord } from '../../src/domain/api-key.js'
import { requestIdAt } from '../../src/domain/request-id.js'
import { RequestLog } from '../../src/services/request-log.js'
import { RetentionPruner } from '../../src/services/retention-pruner.js'
import { pageRequestLog, type RequestLogFilter } from '../../src/storage/request-log-pages.js'
import { pruneRequestLog, type RequestLogEntry, requestLogEntry } from '../../src/storage/request-log-repository.js'
import type { WriteQueue } from '../../src/storage/write-queue.js'
import { createTestStorage, START } from '../helper.js'
import { perTest } from '../support/built.js'

const DAY = 86_400_000
const ORG_A = 'aaaaaaaa-0000-4000-8000-000000000001'
const ORG_B = 'bbbbbbbb-0000-4000-8000-000000000002'
const keyOf = (organisationId: string, keyId: string) => ({ keyId, organisation: { id: organisationId } }) as KeyRecord
const KEYS = [
  keyOf(ORG_A, 'a1a1a1a1-0000-4000-8000-000000000001'),
  keyOf(ORG_A, 'a2a2a2a2-0000-4000-8000-000000000002'),
  keyOf(ORG_B, 'b1b1b1b1-0000-4000-8000-000000000003'),
]
const ROUTES = ['/api/v1/tiers', '/api/v1/students/:id/progress', '/api/v1/students/:id/enroll']
const STATUSES: [number, string | null][] = [
  [200, null],
  [304, null],
  [403, 'insufficient_scope'],
  [404, 'student_not_found'],
  [429, 'rate_limited'],
  [503, 'storage_unavailable'],
]

const silent = pino({ level: 'silent' })

/** The i-th of a varied run of entries, at `at`. */
function entryAt(i: number, at: number): RequestLogEntry {
  const key = KEYS[i % 3]!
  const [status, problem] = STATUSES[i % STATUSES.length]!
  return {
    at,
    organisationId: key.organisation.id,
    keyId: key.keyId,
    method: i % 4 === 0 ? 'POST' : 'GET',
    route: ROUTES[i % ROUTES.length]!,
    status,
    problem,
    latencyMs: (i % 50) / 10,
    requestId: requestIdAt(at),
    address: i % 2 === 0 ? '192.0.2.1' : '2001:db8::7',
  }
}

function record(log: RequestLog, entry: RequestLogEntry): void {
  const key = KEYS.find((k) => k.keyId === entry.keyId)!
  const { method, route, status, problem, latencyMs, requestId, address } = entry
  log.record(key, method, route, status, problem ?? undefined, latencyMs, requestId, address)
}

/** Everything of a page but its positions. */
const fields = (entries: readonly (RequestLogEntry & { id?: string })[]) => entries.map(({ id: _, ...rest }) => rest)

/** Writes that count their statements and transactions, and fail while `failing` is set. */
function observed(writes: WriteQueue) {
  const state = { statements: 0, transactions: 0, failing: false }
  const queue: WriteQueue = {
    transaction(work) {
      state.transactions++
      return writes.transaction(work)
    },
    statement(work) {
      state.statements++
      if (state.failing) return Promise.reject(new Error('storage is down'))
      return writes.statement(work)
    },
  }
  return { state, queue }
}

async function readAll(db: Parameters<typeof pageRequestLog>[0], filter: RequestLogFilter, limit: number) {
  const pages: RequestLogEntry[][] = []
  let before: string | undefined
  do {
    const page = await pageRequestLog(db, filter, limit, before)
    pages.push(page.entries)
    before = page.next ?? undefined
  } while (before !== undefined)
  return pages
}

describe('request log storage', () => {
  const storage = perTest(() => createTestStorage({ catalog: false }))

  /** `count` entries a second apart from START, written in flushes of `perFlush`. */
  async function written(count: number, perFlush = count): Promise<RequestLogEntry[]> {
    const log = new RequestLog({ writes: storage.writes, log: silent })
    const entries = Array.from({ length: count }, (_, i) => entryAt(i, START + i * 1000))
    for (let i = 0; i < count; i++) {
      record(log, entries[i]!)
      if ((i + 1) % perFlush === 0) await log.flush()
    }
    await log.flush()
    return entries
  }

  it('keeps every field and pages newest first across batches, each entry once', async () => {
    const entries = await written(250, 40)
    const batches = await storage.db.selectFrom('request_log').select('id').execute()
    // Two organisations, seven flushes: one row per organisation and flush, not one per request.
    expect(batches).toHaveLength(14)
    const own = entries.filter((e) => e.organisationId === ORG_A).reverse()
    const pages = await readAll(storage.db, { organisations: [ORG_A] }, 60)
    expect(pages.map((p) => p.length)).toEqual([60, 60, 47])
    expect(fields(pages.flat())).toEqual(own)
    const everyone = await readAll(storage.db, {}, 100)
    expect(fields(everyone.flat())).toEqual([...entries].reverse())
  })

  it('filters by key, status class, problem code and route, exactly', async () => {
    const entries = (await written(300, 70)).reverse()
    const filters: [RequestLogFilter, (e: RequestLogEntry) => boolean][] = [
      [{ keyId: KEYS[1]!.keyId }, (e) => e.keyId === KEYS[1]!.keyId],
      [{ statusClass: 4 }, (e) => e.status >= 400 && e.status < 500],
      [{ statusClass: 3 }, (e) => e.status === 304],
      [{ problem: 'rate_limited' }, (e) => e.problem === 'rate_limited'],
      [{ route: '/api/v1/students/:id/enroll' }, (e) => e.route === '/api/v1/students/:id/enroll'],
      [
        { organisations: [ORG_A], statusClass: 4, route: '/api/v1/tiers' },
        (e) => e.organisationId === ORG_A && e.status >= 400 && e.status < 500 && e.route === '/api/v1/tiers',
      ],
    ]
    for (const [filter, keep] of filters) {
      const expected = entries.filter(keep)
      expect(expected.length, JSON.stringify(filter)).toBeGreaterThan(0)
      expect(fields((await readAll(storage.db, filter, 25)).flat()), JSON.stringify(filter)).toEqual(expected)
    }
  })

  it("reads a partner's organisations only, and finds a request by its id in them alone", async () => {
    const entries = await written(120, 30)
    const ofB = entries.filter((e) => e.organisationId === ORG_B)
    const asA = { organisations: [ORG_A] }
    expect((await pageRequestLog(storage.db, { ...asA, keyId: KEYS[2]!.keyId }, 100)).entries).toEqual([])
    for (const entry of [ofB[0]!, ofB.at(-1)!, entries[57]!]) {
      const found = await requestLogEntry(storage.db, entry.requestId.toUpperCase())
      expect(fields([found!])).toEqual([entry])
      const own = await requestLogEntry(storage.db, entry.requestId, [ORG_A])
      expect(own === undefined).toBe(entry.organisationId === ORG_B)
    }
    // An id of another time, and a random (v4) one, name no entry.
    expect(await requestLogEntry(storage.db, requestIdAt(START + 5 * DAY))).toBeUndefined()
    expect(await requestLogEntry(storage.db, crypto.randomUUID())).toBeUndefined()
  })

  it('prunes what is older than 7 days, a few batches at a time, at start and hourly', async () => {
    const clock = new ManualClock(START)
    const log = new RequestLog({ writes: storage.writes, log: silent })
    const old = Array.from({ length: 250 }, (_, i) => entryAt(i, START + i))
    // Each of another organisation: 250 batches of one entry each.
    for (const [i, entry] of old.entries()) {
      const id = `cccccccc-0000-4000-8000-${String(i).padStart(12, '0')}`
      log.record(keyOf(id, id), 'GET', entry.route, 200, undefined, 1, entry.requestId, 'x')
    }
    const recent = entryAt(1, START + 6 * DAY)
    record(log, recent)
    await log.flush()
    const { state, queue } = observed(storage.writes)
    clock.set(START + 7 * DAY + 60_000)
    const deleted = await pruneRequestLog(storage.db, { before: clock.now() - 7 * DAY, write: queue.transaction })
    expect(deleted).toBe(250)
    // 100 batches a delete.
    expect(state.transactions).toBe(3)
    const left = await pageRequestLog(storage.db, {}, 10)
    expect(fields(left.entries)).toEqual([recent])

    // The pruner's own run, once the recent entry is 7 days old too.
    clock.set(START + 13 * DAY + 60_000)
    const pruner = new RetentionPruner({
      storage,
      clock,
      feedRetentionDays: 90,
      disclosureRetentionDays: 0,
      mailRetentionDays: 30,
      log: silent,
      pauseMs: 0,
    })
    expect(await pruner.run()).toBeGreaterThanOrEqual(1)
    expect((await pageRequestLog(storage.db, {}, 10)).entries).toEqual([])
  })

  it('writes many entries in few statements, and keeps entries up to its limit while storage is down', async () => {
    const { state, queue } = observed(storage.writes)
    const lines: string[] = []
    const logger = pino(
      { level: 'warn' },
      new Writable({
        write(chunk, _encoding, done) {
          lines.push(String(chunk))
          done()
        },
      }),
    )
    const log = new RequestLog({ writes: queue, log: logger, limit: 500 })
    const entries = Array.from({ length: 600 }, (_, i) => entryAt(i, START + i))
    for (const entry of entries.slice(0, 400)) record(log, entry)
    expect(state.statements).toBe(0)
    await log.flush()
    // 400 entries of two organisations: one statement.
    expect(state.statements).toBe(1)

    state.failing = true
    for (const entry of entries.slice(400)) record(log, entry)
    log.start(60_000)
    await log.stop().catch(() => {})
    expect(log.waiting).toBe(200)
    for (let i = 0; i < 400; i++) record(log, entryAt(i, START + DAY + i))
    // 500 at most wait: 300 of the 400 more are kept, 100 dropped.
    expect(log.waiting).toBe(500)
    expect(log.dropped).toBe(100)
    await expect(log.flush()).rejects.toThrow('storage is down')
    expect(lines.some((line) => line.includes('could not write the request log'))).toBe(true)

    state.failing = false
    log.start(60_000)
    await log.stop()
    expect(log.waiting).toBe(0)
    const stored = (await readAll(storage.db, {}, 1000)).flat()
    expect(stored).toHaveLength(900)
    expect(fields(stored.slice(-400))).toEqual(entries.slice(0, 400).reverse())
    expect(lines.some((line) => line.includes('written again') && line.includes('"dropped":100'))).toBe(true)
  })
})
