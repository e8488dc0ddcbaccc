/**
 * How far V8 lets the old generation grow between two full collections.
 *
 * The service's heap is small and its short-lived objects rarely survive, so V8 sees collections
 * as cheap and grows the old generation by about a tenth at a time: frequent mark-compacts under
 * steady load, whose pauses were the catalog's open-loop tail; letting the old generation double
 * removed most of that tail at no cost in resident memory (docs/performance.md). V8 reads the
 * factor at every collection, so setting it once the process has started is enough; it is a V8
 * option, which Node lets `v8.setFlagsFromString` change at run time.
 */
import v8 from 'node:v8'

/** What of node:v8 this needs (a test passes its own). */
export type FlagSetter = Pick<typeof v8, 'setFlagsFromString'>

/** Sets the old generation's growth between full collections to `percent`; 0 leaves V8's own choice. */
export function setHeapGrowth(percent: number, flags: FlagSetter = v8): void {
  if (percent > 0) flags.setFlagsFromString(`--heap-growing-percent=${percent}`)
}
