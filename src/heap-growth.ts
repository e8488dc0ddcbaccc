/**
 * How far V8 lets the old generation grow between two full collections.
 *
 * The service's heap is small (35-40 MB with 50,000 keys cached) and its short-lived objects
 * rarely survive, so V8 sees collections as cheap and grows the old generation by about a tenth
 * at a time: a mark-compact every 2-4 s under steady load, each a 4-11 ms pause plus marking
 * steps of up to 23 ms. Those were the open-loop tail: GET /api/v1/tiers at 19,700 req/s had a
 * p99 of 18.3 and 21.9 ms, and 4.3 and 4.9 ms with the old generation allowed to double (two
 * rounds each, README "Performance"); the resident memory with 50,000 keys cached stayed 148 MB
 * (`bench/key-cache-memory.mjs`). V8 reads the factor at every collection, so setting it once
 * the process has started is enough; it is a V8 option, which Node lets `v8.setFlagsFromString`
 * change at run time.
 */
import v8 from 'node:v8'

/** What of node:v8 this needs (a test passes its own). */
export type FlagSetter = Pick<typeof v8, 'setFlagsFromString'>

/** Sets the old generation's growth between full collections to `percent`; 0 leaves V8's own choice. */
export function setHeapGrowth(percent: number, flags: FlagSetter = v8): void {
  if (percent > 0) flags.setFlagsFromString(`--heap-growing-percent=${percent}`)
}
