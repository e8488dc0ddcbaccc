/**
 * A partner's webhook receiver for tests: records what arrives and answers with the next
 * scripted status (200 when none); `hang` never answers, `hold` answers when `release` is called.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Kysely } from 'kysely'
import type { Database } from '../../src/storage/tables.js'

export interface Received {
  path: string
  headers: http.IncomingHttpHeaders
  body: string
}

export class Receiver {
  readonly received: Received[] = []
  script: (number | 'hang' | 'hold')[] = []
  /** Requests being answered now (arrived, not yet answered or cut off). */
  open = 0
  /** The most requests open at once. */
  mostOpen = 0
  readonly #held: http.ServerResponse[] = []
  readonly #waiters: { count: number; resolve: () => void }[] = []
  readonly #server = http.createServer((req, res) => {
    this.open++
    this.mostOpen = Math.max(this.mostOpen, this.open)
    res.on('close', () => this.open--)
    let body = ''
    req.on('data', (chunk) => (body += chunk))
    req.on('end', () => {
      this.received.push({ path: req.url ?? '', headers: req.headers, body })
      for (const waiter of this.#waiters.filter((w) => this.received.length >= w.count)) {
        this.#waiters.splice(this.#waiters.indexOf(waiter), 1)
        waiter.resolve()
      }
      const next = this.script.shift() ?? 200
      if (next === 'hold') this.#held.push(res)
      else if (next !== 'hang') res.writeHead(next).end('thanks')
    })
  })

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve))
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`
  }

  /** Resolves once `count` requests have arrived in all. */
  arrived(count: number): Promise<void> {
    if (this.received.length >= count) return Promise.resolve()
    return new Promise((resolve) => this.#waiters.push({ count, resolve }))
  }

  /** Answers every held request with `status`. */
  release(status: number): void {
    for (const res of this.#held.splice(0)) res.writeHead(status).end('thanks')
  }

  async stop(): Promise<void> {
    this.#server.closeAllConnections()
    await new Promise((resolve) => this.#server.close(resolve))
  }
}

/** A loopback URL nothing listens on: connections to it are refused. */
export async function refusingUrl(): Promise<string> {
  const server = http.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return `http://127.0.0.1:${port}/closed`
}

/** Empties the webhook tables, so that a test starts with no endpoint, delivery or manual send. */
export async function clearWebhooks(db: Kysely<Database>): Promise<void> {
  await db.deleteFrom('webhook_deliveries').execute()
  await db.deleteFrom('webhook_manual_sends').execute()
  await db.deleteFrom('webhook_endpoints').execute()
}
