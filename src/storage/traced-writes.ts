/**
 * Request-time writes inside a span each, when tracing is on: the storage engines wrap their
 * write queue here, so an untraced server keeps the queue itself and pays nothing.
 */
import { activeSpans } from '../instrumentation/spans.js'
import type { WriteQueue } from './write-queue.js'

/**
 * `queue` with a span around each write, from the call to its commit, or `queue` itself untraced;
 * `system` is OpenTelemetry's name for the engine.
 */
export function tracedWrites(queue: WriteQueue, system: string): WriteQueue {
  const spans = activeSpans()
  if (spans === undefined) return queue
  const attributes = { 'db.system.name': system }
  return {
    transaction: (work) => spans.run('storage.transaction', attributes, () => queue.transaction(work)),
    statement: (work) => spans.run('storage.statement', attributes, () => queue.statement(work)),
  }
}
