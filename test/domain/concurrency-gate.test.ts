/** The password-hash gate: bounded concurrency, a bounded queue, one task per key. */
import { describe, expect, it } from 'vitest'
import { ConcurrencyGate } from '../../src/domain/concurrency-gate.js'

/** A task that finishes when the test says so. */
function controllable() {
  let finish!: () => void
  const done = new Promise<void>((resolve) => (finish = resolve))
  let started = false
  return {
    task: () => {
      started = true
      return done
    },
    finish: () => finish(),
    get started() {
      return started
    },
  }
}

describe('ConcurrencyGate', () => {
  it('runs up to `concurrency` tasks, queues up to `queue`, refuses the rest at once', async () => {
    const gate = new ConcurrencyGate({ concurrency: 2, queue: 1, perKey: 1 })
    const tasks = Array.from({ length: 4 }, controllable)
    const entries = tasks.map((t, i) => gate.run(`k${i}`, t.task))
    expect(entries.map((e) => ('refused' in e ? e.refused : 'admitted'))).toEqual([
      'admitted',
      'admitted',
      'admitted',
      'queue-full',
    ])
    await Promise.resolve()
    expect(tasks.map((t) => t.started)).toEqual([true, true, false, false])
    tasks[0]!.finish()
    await (entries[0] as { result: Promise<void> }).result
    await new Promise((resolve) => setImmediate(resolve))
    expect(tasks[2]!.started).toBe(true)
    expect(gate.running).toBe(2)
    tasks[1]!.finish()
    tasks[2]!.finish()
    await Promise.all(entries.slice(1, 3).map((e) => (e as { result: Promise<void> }).result))
    expect([gate.running, gate.waiting]).toEqual([0, 0])
  })

  it('refuses a second task for a key that has one running or waiting, and frees the key after', async () => {
    const gate = new ConcurrencyGate({ concurrency: 4, queue: 4, perKey: 1 })
    const first = controllable()
    const entry = gate.run('address', first.task)
    expect(gate.run('address', async () => 1)).toEqual({ refused: 'key-busy' })
    expect('result' in gate.run('other', async () => 1)).toBe(true)
    first.finish()
    await (entry as { result: Promise<void> }).result
    expect('result' in gate.run('address', async () => 1)).toBe(true)
  })

  it('frees the slot when a task fails', async () => {
    const gate = new ConcurrencyGate({ concurrency: 1, queue: 0, perKey: 1 })
    const failing = gate.run('a', async () => {
      throw new Error('boom')
    })
    await expect((failing as { result: Promise<never> }).result).rejects.toThrow('boom')
    expect('result' in gate.run('a', async () => 1)).toBe(true)
  })
})
