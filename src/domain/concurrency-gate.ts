/**
 * At most `concurrency` tasks at once, a bounded queue behind them, and at most `perKey` tasks
 * per key (running or waiting). Whatever does not fit is refused at once, never queued without
 * bound: for password hashing, where many concurrent sign-ins from one address once queued
 * another address's sign-in behind all their scrypt hashes (figures: docs/performance.md).
 */
export type GateRefusal = 'key-busy' | 'queue-full'

export type GateEntry<T> = { readonly refused: GateRefusal } | { readonly result: Promise<T> }

export class ConcurrencyGate {
  readonly concurrency: number
  readonly queueLimit: number
  readonly perKey: number
  #running = 0
  readonly #waiting: (() => void)[] = []
  readonly #perKey = new Map<string, number>()

  constructor(options: { concurrency: number; queue: number; perKey: number }) {
    for (const [name, value, min] of [
      ['concurrency', options.concurrency, 1],
      ['queue', options.queue, 0],
      ['perKey', options.perKey, 1],
    ] as const) {
      if (!Number.isInteger(value) || value < min) throw new RangeError(`${name} must be an integer of at least ${min}`)
    }
    this.concurrency = options.concurrency
    this.queueLimit = options.queue
    this.perKey = options.perKey
  }

  /**
   * Decides synchronously: runs `task` now or queues it, or refuses it.
   *
   * @example
   * const entry = gate.run(address, () => verifyPassword(password, hash))
   * if ('refused' in entry) return busy(entry.refused)
   * const matches = await entry.result
   */
  run<T>(key: string, task: () => Promise<T>): GateEntry<T> {
    const held = this.#perKey.get(key) ?? 0
    if (held >= this.perKey) return { refused: 'key-busy' }
    const now = this.#running < this.concurrency
    if (!now && this.#waiting.length >= this.queueLimit) return { refused: 'queue-full' }
    this.#perKey.set(key, held + 1)
    const turn = now ? Promise.resolve() : new Promise<void>((resolve) => this.#waiting.push(resolve))
    if (now) this.#running++
    const result = turn.then(task).finally(() => {
      const left = (this.#perKey.get(key) ?? 1) - 1
      if (left === 0) this.#perKey.delete(key)
      else this.#perKey.set(key, left)
      // The slot passes straight to the next waiter, so #running stays as it is.
      const next = this.#waiting.shift()
      if (next === undefined) this.#running--
      else next()
    })
    return { result }
  }

  /** Tasks running now. */
  get running(): number {
    return this.#running
  }

  /** Tasks waiting for a slot. */
  get waiting(): number {
    return this.#waiting.length
  }
}
