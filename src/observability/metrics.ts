/**
 * The service's Prometheus metrics (prom-client), one registry per app: counters fed by the
 * channels of metrics-channels.ts, gauges read at scrape time from the services and from two
 * indexed queries, and Node's own (event-loop lag, heap, GC) from collectDefaultMetrics.
 * Every metric and its labels is listed in docs/observability.md ("Metrics").
 */
import type { Channel } from 'node:diagnostics_channel'
import { sql } from 'kysely'
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client'
import type { KeyCache } from '../services/key-cache.js'
import type { Limiters } from '../services/limiters.js'
import type { RequestLog } from '../services/request-log.js'
import type { Storage } from '../storage/connection.js'
import type { WriteQueue } from '../storage/write-queue.js'
import {
  batchChannel,
  type DisclosureEvent,
  deliveryChannel,
  disclosureChannel,
  observeRequests,
  refusalChannel,
} from '../instrumentation/metrics-channels.js'
import { LATENCY_BUCKETS, RequestMetrics } from './metrics-requests.js'

/** The services whose state is read at each scrape. */
export interface WatchedServices {
  readonly keys: KeyCache
  readonly limiters: Limiters
  readonly requestLog?: RequestLog | undefined
}

const BATCH_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256]
const STORES = ['redis', 'memory', 'memory-fallback'] as const

export class Metrics {
  readonly registry = new Registry()
  readonly #unsubscribe: Array<() => void> = []
  readonly #writeSeconds: Histogram<'engine'>
  readonly #writeErrors: Counter<'engine'>
  readonly #engine: string
  readonly #storage: Storage

  constructor(storage: Storage) {
    const registry = this.registry
    this.#storage = storage
    this.#engine = storage.engine
    collectDefaultMetrics({ register: registry })

    const requests = new RequestMetrics()
    requests.register(registry)
    this.#unsubscribe.push(
      observeRequests((route, method, status, seconds) => requests.record(route, method, status, seconds)),
    )

    const refusals = new Counter({
      name: 'http_refusals_total',
      help: 'Problem answers with status 401, 403, 404 or 429, by problem code.',
      labelNames: ['code'] as const,
      registers: [registry],
    })
    this.#on(refusalChannel, (code: string) => refusals.inc({ code }))

    const disclosures = new Counter({
      name: 'disclosure_rows_written_total',
      help: 'Disclosure log rows written, by action and outcome.',
      labelNames: ['action', 'outcome'] as const,
      registers: [registry],
    })
    this.#on(disclosureChannel, (event: DisclosureEvent) =>
      disclosures.inc({ action: event.action, outcome: event.outcome }, event.rows),
    )

    this.#writeSeconds = new Histogram({
      name: 'storage_write_duration_seconds',
      help: 'Request-time writes through the write queue, from submission to commit, by engine.',
      labelNames: ['engine'] as const,
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    })
    this.#writeErrors = new Counter({
      name: 'storage_write_errors_total',
      help: 'Request-time writes that failed (not committed), by engine.',
      labelNames: ['engine'] as const,
      registers: [registry],
    })

    const batches = new Histogram({
      name: 'sqlite_group_commit_batch_size',
      help: 'Writes that shared one SQLite commit (group commit).',
      buckets: BATCH_BUCKETS,
      registers: [registry],
    })
    this.#on(batchChannel, (units: number) => batches.observe(units))

    const deliveries = new Counter({
      name: 'webhook_deliveries_total',
      help: 'Webhook delivery attempts by outcome: delivered (2xx), refused (another status), unreachable.',
      labelNames: ['outcome'] as const,
      registers: [registry],
    })
    this.#on(deliveryChannel, (outcome: string) => deliveries.inc({ outcome }))
    this.#backlog()
  }

  /** Gauges and counters that the services keep, read at each scrape. */
  watch({ keys, limiters, requestLog }: WatchedServices): void {
    const registry = this.registry
    if (requestLog !== undefined) this.#watchRequestLog(requestLog)
    scrapedCounter(registry, 'key_cache_hits_total', 'Key lookups answered from the key cache.', () => keys.hits)
    scrapedCounter(registry, 'key_cache_misses_total', 'Key lookups that read storage.', () => keys.storageLookups)
    new Gauge({
      name: 'key_cache_entries',
      help: 'Entries in the key cache: known keys, and hashes known to be no key.',
      labelNames: ['kind'] as const,
      registers: [registry],
      collect() {
        this.set({ kind: 'key' }, keys.size)
        this.set({ kind: 'unknown' }, keys.unknownSize)
      },
    })
    new Gauge({
      name: 'rate_limit_store',
      help: 'The rate-limit store in use: 1 for redis, memory (no REDIS_URL) or memory-fallback (Redis unreachable).',
      labelNames: ['store'] as const,
      registers: [registry],
      collect() {
        const current = limiters.store()
        for (const store of STORES) this.set({ store }, store === current ? 1 : 0)
      },
    })
  }

  /** What the request log holds unwritten, and what it dropped when storage could not take it. */
  #watchRequestLog(requestLog: RequestLog): void {
    const registry = this.registry
    scrapedCounter(
      registry,
      'request_log_dropped_total',
      'Request-log entries dropped because storage could not take them and the limit were waiting.',
      () => requestLog.dropped,
    )
    new Gauge({
      name: 'request_log_waiting',
      help: 'Request-log entries held in memory, not yet written.',
      registers: [registry],
      collect() {
        this.set(requestLog.waiting)
      },
    })
  }

  /** The change feed and the webhook outbox, counted by an indexed query at each scrape. */
  #backlog(): void {
    const { registry } = this
    const storage = this.#storage
    new Gauge({
      name: 'change_feed_rows',
      help: 'Rows in the change feed (student_changes), from its first to its last sequence number.',
      registers: [registry],
      // Every worker reads the same database: the workers' answers are one figure, not shares.
      aggregator: 'max',
      async collect() {
        const row = await sql<{ size: number | string | null }>`
          select max(seq) - min(seq) + 1 as size from student_changes`
          .execute(storage.db)
          .catch(() => undefined)
        if (row !== undefined) this.set(Number(row.rows[0]?.size ?? 0))
      },
    })
    new Gauge({
      name: 'webhook_outbox_pending',
      help: 'Webhook deliveries waiting to be sent or retried.',
      registers: [registry],
      aggregator: 'max',
      async collect() {
        const row = await storage.db
          .selectFrom('webhook_deliveries')
          .select((eb) => eb.fn.countAll<number | string>().as('n'))
          .where('state', '=', 'pending')
          .executeTakeFirst()
          .catch(() => undefined)
        if (row !== undefined) this.set(Number(row.n))
      },
    })
  }

  /** `writes` with each call timed and its failures counted. */
  meter(writes: WriteQueue): WriteQueue {
    const timed = <T>(run: Promise<T>, started: number): Promise<T> =>
      run.then(
        (value) => {
          this.#writeSeconds.observe({ engine: this.#engine }, (performance.now() - started) / 1000)
          return value
        },
        (error: unknown) => {
          this.#writeErrors.inc({ engine: this.#engine })
          throw error
        },
      )
    return {
      transaction: (work) => timed(writes.transaction(work), performance.now()),
      statement: (work) => timed(writes.statement(work), performance.now()),
    }
  }

  /** The text a scrape receives, and its content type. */
  async scrape(): Promise<{ text: string; contentType: string }> {
    return { text: await this.registry.metrics(), contentType: this.registry.contentType }
  }

  /** Stops listening to the channels (the app is closing). */
  close(): void {
    for (const unsubscribe of this.#unsubscribe.splice(0)) unsubscribe()
  }

  #on<T>(channel: Channel, listener: (message: T) => void): void {
    const subscriber = (message: unknown) => listener(message as T)
    channel.subscribe(subscriber)
    this.#unsubscribe.push(() => channel.unsubscribe(subscriber))
  }
}

/** A counter whose value a service keeps; the registry reads it at each scrape. */
function scrapedCounter(registry: Registry, name: string, help: string, read: () => number): void {
  let seen = 0
  new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      const now = read()
      if (now > seen) this.inc(now - seen)
      seen = now
    },
  })
}

/** The Storage the app uses: the same, with its request-time writes metered. */
export function meteredStorage(storage: Storage, metrics: Metrics): Storage {
  return Object.create(storage, { writes: { value: metrics.meter(storage.writes), enumerable: true } }) as Storage
}
