/**
 * What a describe block builds for its tests and closes after them (an app, a database), held
 * by a stand-in instead of a `let` set in one hook and closed in another:
 * `const t = perSuite(() => buildTestApp())`. Reading or setting a member of the stand-in
 * reads or sets the member of the one built now; before it is built, or after it is closed,
 * the read throws.
 */
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest'

interface Closable {
  close(): Promise<void>
}

/** Built once before the block's tests (beforeAll) and closed after them (afterAll). */
export function perSuite<T extends Closable>(build: () => Promise<T>): T {
  return standIn(build, beforeAll, afterAll)
}

/** Built afresh before each test of the block (beforeEach) and closed after it (afterEach). */
export function perTest<T extends Closable>(build: () => Promise<T>): T {
  return standIn(build, beforeEach, afterEach)
}

function standIn<T extends Closable>(
  build: () => Promise<T>,
  before: (hook: () => Promise<void>) => void,
  after: (hook: () => Promise<void>) => void,
): T {
  let built: T | undefined
  before(async () => {
    built = await build()
  })
  after(async () => {
    const closing = built
    built = undefined
    await closing?.close()
  })
  const current = (): T => {
    if (built === undefined) throw new Error('read outside the tests and hooks it was built for')
    return built
  }
  return new Proxy({} as T, {
    get(_target, key) {
      const value = current()
      const member = Reflect.get(value, key, value)
      // Bound, so that a method read off the stand-in and called later still has its object.
      return typeof member === 'function' ? member.bind(value) : member
    },
    set: (_target, key, member) => Reflect.set(current(), key, member),
    has: (_target, key) => Reflect.has(current(), key),
    // So that `{ ...standIn }` copies the members of the one built.
    ownKeys: () => Reflect.ownKeys(current()),
    getOwnPropertyDescriptor(_target, key) {
      const descriptor = Reflect.getOwnPropertyDescriptor(current(), key)
      return descriptor === undefined ? undefined : { ...descriptor, configurable: true }
    },
  })
}
