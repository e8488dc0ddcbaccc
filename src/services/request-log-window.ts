/**
 * The request log's entries between two flushes, kept as bytes in one growing array: a request
 * adds WINDOW_RECORD bytes and keeps no object or string alive of its own (its request id goes in as
 * 16 bytes), so entries held for seconds add nothing for the garbage collector to copy or mark.
 * Strings (keys, routes, methods, problem codes, addresses) are numbered once per window. The
 * same window is used again after each flush (`clear`), at the size it has grown to: a new one
 * each time would allocate megabytes every few seconds, which V8 counts towards its next full
 * collection.
 */
import type { KeyRecord } from '../domain/api-key.js'
import { type EntryWindow, WINDOW, writeUuid } from '../storage/request-log-batches.js'

const INITIAL_ENTRIES = 16_384

/** Strings numbered in the order they are first met. */
class Codes {
  readonly #codes = new Map<string, number>()
  values: string[] = []
  clear(): void {
    this.#codes.clear()
    this.values = []
  }
  of(value: string): number {
    let code = this.#codes.get(value)
    if (code === undefined) {
      code = this.values.length
      this.#codes.set(value, code)
      this.values.push(value)
    }
    return code
  }
}

export class EntryWindowBuffer implements EntryWindow {
  bytes = new Uint8Array(INITIAL_ENTRIES * WINDOW.RECORD)
  #view = new DataView(this.bytes.buffer)
  size = 0
  /** Each entry's key, by the entry's place (numbered only when batches are made). */
  readonly keys: KeyRecord[] = []
  readonly #addresses = new Codes()
  readonly #routes = new Codes()
  readonly #methods = new Codes()
  readonly #problems = new Codes()

  get addresses(): readonly string[] {
    return this.#addresses.values
  }
  get routes(): readonly string[] {
    return this.#routes.values
  }
  get methods(): readonly string[] {
    return this.#methods.values
  }
  get problems(): readonly string[] {
    return this.#problems.values
  }

  add(
    key: KeyRecord,
    method: string,
    route: string,
    status: number,
    problem: string | undefined,
    latencyMs: number,
    requestId: string,
    address: string,
  ): void {
    if ((this.size + 1) * WINDOW.RECORD > this.bytes.length) this.#grow()
    this.keys[this.size] = key
    const offset = this.size * WINDOW.RECORD
    const view = this.#view
    view.setFloat32(offset + WINDOW.LATENCY, latencyMs, true)
    view.setUint16(offset + WINDOW.STATUS, status, true)
    view.setUint16(offset + WINDOW.ROUTE, this.#routes.of(route), true)
    view.setUint16(offset + WINDOW.METHOD, this.#methods.of(method), true)
    view.setUint16(offset + WINDOW.PROBLEM, problem === undefined ? 0 : this.#problems.of(problem) + 1, true)
    view.setUint32(offset + WINDOW.ADDRESS, this.#addresses.of(address), true)
    writeUuid(this.bytes, offset + WINDOW.REQUEST_ID, requestId)
    this.size++
  }

  /** Empty again, its bytes kept (what was read from it must have been copied out). */
  clear(): void {
    this.size = 0
    for (const codes of [this.#addresses, this.#routes, this.#methods, this.#problems]) codes.clear()
  }

  #grow(): void {
    const bytes = new Uint8Array(this.bytes.length * 2)
    bytes.set(this.bytes)
    this.bytes = bytes
    this.#view = new DataView(bytes.buffer)
  }
}
