/**
 * Drains the webhook outbox: claims due deliveries (a lease keeps other instances off them),
 * signs each per Standard Webhooks with the endpoint's secrets, sends it under the SSRF rules,
 * and records the outcome (the retry schedule is in domain/webhook-events.ts). Every instance
 * runs one; a restarted or killed instance loses nothing, since the outbox is in storage.
 */
import type { FastifyBaseLogger } from 'fastify'
import type { Clock } from '../clock.js'
import { signatureHeader } from '../domain/webhook-signature.js'
import { PeriodicTask } from '../services/periodic-task.js'
import type { Storage } from '../storage/connection.js'
import { claimDue, type DueDelivery, recordAttempt } from '../storage/webhook-outbox.js'
import { signingSecrets } from '../storage/webhook-repository.js'
import { type Attempt, type SendOptions, sendWebhook } from './send-webhook.js'

export interface DelivererOptions {
  storage: Storage
  clock: Clock
  log: FastifyBaseLogger
  /** Deadline of one attempt. */
  timeoutMs: number
  /** Local development and tests only: loopback endpoints (and plain http to them) allowed. */
  allowLoopback: boolean
  /** Deliveries sent at once by this instance. */
  batch?: number
  resolve?: SendOptions['resolve']
}

/**
 * How long a claimed delivery is kept from other instances: longer than an attempt can take (its
 * deadline, then recording the outcome), so a lease never ends while its delivery is being sent;
 * short enough that a delivery an instance was killed holding goes out again soon.
 */
export function leaseMs(timeoutMs: number): number {
  return 2 * timeoutMs + 5_000
}

/** `run()` resolves to how many attempts were made. */
export class WebhookDeliverer extends PeriodicTask {
  readonly #options: DelivererOptions

  constructor(options: DelivererOptions) {
    super(() => this.#drain(), options.log, 'could not deliver webhooks')
    this.#options = options
  }

  async #drain(): Promise<number> {
    const { storage, clock, timeoutMs } = this.#options
    let attempts = 0
    for (;;) {
      const due = await storage.writes.transaction((db) =>
        claimDue(db, clock.now(), leaseMs(timeoutMs), this.#options.batch ?? 16, storage.engine),
      )
      if (due.length === 0) return attempts
      await Promise.all(due.map((delivery) => this.#deliver(delivery)))
      attempts += due.length
    }
  }

  async #deliver(delivery: DueDelivery): Promise<void> {
    const { storage, clock } = this.#options
    const now = clock.now()
    const timestamp = Math.floor(now / 1000)
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'Curriculum-API-Webhooks/1',
      'webhook-id': delivery.id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signatureHeader(signingSecrets(delivery, now), delivery.id, timestamp, delivery.payload),
    }
    let attempt: Attempt
    try {
      attempt = await sendWebhook(new URL(delivery.url), headers, delivery.payload, this.#options)
    } catch (error) {
      attempt = { ok: false, status: null, latencyMs: 0, error: String(error), response: '', bodySent: false }
    }
    await storage.writes.transaction((trx) => recordAttempt(trx, delivery, attempt, clock.now()))
  }
}
