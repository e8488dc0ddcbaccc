/**
 * Drains the webhook outbox: claims due deliveries fairly (a lease keeps other instances off
 * them; at most ENDPOINT_CONCURRENCY attempts per endpoint; turns across organisations and
 * endpoints: storage/webhook-outbox-repository.ts), signs each per Standard Webhooks with the endpoint's
 * secrets, sends it under the SSRF rules, and records the outcome (the retry schedule is in
 * domain/webhook-events.ts). Every instance runs one; a restarted or killed instance loses
 * nothing, since the outbox is in storage.
 *
 * Attempts are not sent in batches awaited together: each slot is claimed again as soon as its
 * attempt ends, and every `start` interval, so an endpoint that hangs holds only its own slots
 * and a delivery to anyone else goes out at once.
 */
import type { FastifyBaseLogger } from 'fastify'
import type { Clock } from '../clock.js'
import { ENDPOINT_CONCURRENCY } from '../domain/webhook-events.js'
import { WEBHOOK_USER_AGENT, type WebhookHeaders } from '../domain/webhook-payloads.js'
import { signatureHeader } from '../domain/webhook-signature.js'
import type { Storage } from '../storage/connection.js'
import { activeSpans, type SpanNotes } from '../instrumentation/spans.js'
import { recordDelivery } from '../instrumentation/metrics-channels.js'
import { type AttemptRecord, claimDue, type DueDelivery, recordAttempt } from '../storage/webhook-outbox-repository.js'
import { signingSecrets } from '../storage/webhook-endpoint-repository.js'
import { announceNotices, type NoticeContext, queueEndpointDisabledNotice } from '../cases/notices.js'
import { type SendOptions, sendWebhook } from './send-webhook.js'

/** Attempts one instance has under way at once, all endpoints together. */
export const INSTANCE_CONCURRENCY = 32

export interface DelivererOptions {
  storage: Storage
  clock: Clock
  log: FastifyBaseLogger
  /** Deadline of one attempt. */
  timeoutMs: number
  /** Local development and tests only: loopback endpoints (and plain http to them) allowed. */
  allowLoopback: boolean
  /** Attempts this instance has under way at once; INSTANCE_CONCURRENCY by default. */
  concurrency?: number
  resolve?: SendOptions['resolve']
  /** Where an endpoint disabled after failures is told of (cases/notices.ts); none when left out. */
  notices?: NoticeContext
}

/**
 * How long a claimed delivery is kept from other instances: longer than an attempt can take (its
 * deadline, then recording the outcome), so a lease never ends while its delivery is being sent;
 * short enough that a delivery an instance was killed holding goes out again soon.
 */
export function leaseMs(timeoutMs: number): number {
  return 2 * timeoutMs + 5_000
}

export class WebhookDeliverer {
  readonly #options: DelivererOptions
  readonly #concurrency: number
  readonly #sending = new Set<Promise<void>>()
  /** Attempts started since this instance began (`run` counts its own from it). */
  #started = 0
  /** The claim under way or last finished; claims run one after another. */
  #claims: Promise<number> = Promise.resolve(0)
  /** A claim asked for and not yet begun: further asks share it. */
  #nextClaim: Promise<number> | undefined
  /** The last claim left endpoints another instance was claiming for: there may be more to do. */
  #skipped = false
  #timer: NodeJS.Timeout | undefined
  readonly #stopping = new AbortController()

  constructor(options: DelivererOptions) {
    this.#options = options
    this.#concurrency = options.concurrency ?? INSTANCE_CONCURRENCY
  }

  /**
   * Claims what the free slots can take now and starts sending it; resolves to how many
   * attempts were started. Never awaits the attempts themselves.
   */
  claim(): Promise<number> {
    this.#nextClaim ??= this.#claims.then(() => {
      this.#nextClaim = undefined
      return this.#fill().catch((err: unknown) => {
        this.#options.log.warn({ err }, 'could not claim webhook deliveries')
        return 0
      })
    })
    this.#claims = this.#nextClaim
    return this.#nextClaim
  }

  /**
   * Sends until nothing more is due for this instance (what is due but held by another
   * instance, or by an endpoint backing off, is left); resolves to how many attempts it made.
   * Tests call it instead of a timer.
   */
  async run(): Promise<number> {
    const before = this.#started
    await this.claim()
    for (;;) {
      // The last claim asked for, whoever asked (an attempt that ends asks for one too).
      const last = this.#claims
      await last
      if (this.#sending.size > 0) await Promise.race(this.#sending)
      else if (last !== this.#claims) continue
      else if (this.#skipped) await this.claim()
      else return this.#started - before
    }
  }

  /** Claims every `intervalMs` (0: never), besides after each attempt. */
  start(intervalMs: number): void {
    if (intervalMs === 0) return
    this.#timer = setInterval(() => void this.claim(), intervalMs)
    this.#timer.unref()
  }

  /** Stops claiming, cuts the attempts under way short (they are retried later) and waits for them. */
  async stop(): Promise<void> {
    clearInterval(this.#timer)
    this.#stopping.abort()
    await this.#claims
    await Promise.all(this.#sending)
  }

  async #fill(): Promise<number> {
    const { storage, clock, timeoutMs } = this.#options
    let started = 0
    while (!this.#stopping.signal.aborted) {
      const slots = this.#concurrency - this.#sending.size
      if (slots <= 0) break
      const { due, claimed, skipped } = await storage.writes.transaction((trx) =>
        claimDue(trx, {
          now: clock.now(),
          leaseMs: leaseMs(timeoutMs),
          slots,
          perEndpoint: ENDPOINT_CONCURRENCY,
          locks: storage.locks,
        }),
      )
      for (const delivery of due) {
        const sending = this.#traced(delivery).finally(() => {
          this.#sending.delete(sending)
          // Its slot is free: take the next delivery now rather than at the next interval.
          if (!this.#stopping.signal.aborted) void this.claim()
        })
        this.#sending.add(sending)
      }
      started += due.length
      this.#started += due.length
      this.#skipped = skipped > 0
      if (claimed === 0) break
    }
    return started
  }

  /** One delivery, in a `webhook.delivery` span (a trace of its own) when tracing is on. */
  #traced(delivery: DueDelivery): Promise<void> {
    const spans = activeSpans()
    if (spans === undefined) return this.#deliver(delivery)
    return spans.run('webhook.delivery', { 'webhook.id': delivery.id }, (notes) => this.#deliver(delivery, notes))
  }

  async #deliver(delivery: DueDelivery, notes?: SpanNotes): Promise<void> {
    const { storage, clock, timeoutMs, log } = this.#options
    const now = clock.now()
    const timestamp = Math.floor(now / 1000)
    const signed: WebhookHeaders = {
      'user-agent': WEBHOOK_USER_AGENT,
      'webhook-id': delivery.id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signatureHeader(signingSecrets(delivery, now), delivery.id, timestamp, delivery.payload),
    }
    const headers = { 'content-type': 'application/json', ...signed }
    let attempt: AttemptRecord
    try {
      attempt = await sendWebhook(new URL(delivery.url), headers, delivery.payload, {
        ...this.#options,
        stopping: this.#stopping.signal,
      })
    } catch (error) {
      attempt = { ok: false, status: null, latencyMs: 0, error: String(error), response: '', bodySent: false }
    }
    notes?.set('webhook.outcome', attempt.ok ? 'delivered' : 'failed')
    if (attempt.status !== null) notes?.set('http.response.status_code', attempt.status)
    recordDelivery(attempt.ok ? 'delivered' : attempt.status === null ? 'unreachable' : 'refused')
    try {
      const notices = this.#options.notices
      const queued = await storage.writes.transaction(async (trx) => {
        const { disabled } = await recordAttempt(trx, delivery, attempt, clock.now(), timeoutMs)
        return disabled && notices ? queueEndpointDisabledNotice(trx, delivery.endpoint_id, notices, clock.now()) : []
      })
      announceNotices(this.#options.notices?.held, queued)
    } catch (err) {
      // The lease runs out and the delivery is sent again: nothing is lost.
      log.warn({ err, deliveryId: delivery.id }, 'could not record a webhook attempt')
    }
  }
}
