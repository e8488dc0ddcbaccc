/**
 * The V8 option the server sets at start (heap-growth.ts) and its configuration. What it does
 * to latency is the benchmark's to show (bench/README.md); here: that it is set as configured.
 */
import v8 from 'node:v8'
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { setHeapGrowth } from '../../src/heap-growth.js'

function recorder() {
  const set: string[] = []
  return { set, flags: { setFlagsFromString: (flags: string) => set.push(flags) } }
}

describe('heap growth', () => {
  it('lets the old generation double by default, and leaves V8 alone with 0', () => {
    const byDefault = recorder()
    setHeapGrowth(loadConfig({}).heapGrowingPercent, byDefault.flags)
    expect(byDefault.set).toEqual(['--heap-growing-percent=100'])
    const off = recorder()
    setHeapGrowth(loadConfig({ HEAP_GROWING_PERCENT: '0' }).heapGrowingPercent, off.flags)
    expect(off.set).toEqual([])
  })

  it('refuses a value out of range at start', () => {
    expect(() => loadConfig({ HEAP_GROWING_PERCENT: '-1' })).toThrow(/HEAP_GROWING_PERCENT/)
    expect(() => loadConfig({ HEAP_GROWING_PERCENT: '1001' })).toThrow(/HEAP_GROWING_PERCENT/)
    expect(() => loadConfig({ HEAP_GROWING_PERCENT: 'lots' })).toThrow(/HEAP_GROWING_PERCENT/)
  })

  it('is an option this Node accepts at run time', () => {
    // Setting V8's own default back: nothing changes for the other tests in this process.
    expect(() => setHeapGrowth(100)).not.toThrow()
    v8.setFlagsFromString('--heap-growing-percent=0')
  })
})
