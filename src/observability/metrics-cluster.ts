/**
 * Metrics with WORKERS=n: each worker keeps its own registry, and the primary gathers them all
 * (prom-client's AggregatorRegistry asks every worker over the cluster's IPC channel and adds the
 * answers up). The primary serves the sum on METRICS_PORT; a worker asked for `GET /metrics` on
 * the main port asks the primary for it, so that a scrape never sees one worker's share only.
 */
import cluster from 'node:cluster'
import { AggregatorRegistry, type Registry } from 'prom-client'
import type { Scrape } from './metrics-route.js'

const ASK = 'curriculum:metrics-ask'
const ANSWER = 'curriculum:metrics-answer'
/** Longer than the aggregator's own wait for the workers (5 s), so that its error comes first. */
const ASK_TIMEOUT_MS = 6000

interface Ask {
  readonly type: typeof ASK
  readonly id: number
}
interface Answer {
  readonly type: typeof ANSWER
  readonly id: number
  readonly text?: string
  readonly contentType?: string
  readonly error?: string
}

/** In a worker: the registry the primary's aggregator reads. */
export function shareWithPrimary(registry: Registry): void {
  // prom-client answers the primary's questions once an aggregator exists in the process.
  new AggregatorRegistry()
  AggregatorRegistry.setRegistries([registry])
}

/** In the primary: every worker's metrics together, and answers to workers that ask for them. */
export function gatherWorkers(): Scrape {
  const aggregator = new AggregatorRegistry()
  const scrape: Scrape = async () => ({ text: await aggregator.clusterMetrics(), contentType: aggregator.contentType })
  cluster.on('message', (worker, message: Partial<Ask>) => {
    if (message?.type !== ASK || typeof message.id !== 'number') return
    const id = message.id
    scrape().then(
      ({ text, contentType }) => worker.send({ type: ANSWER, id, text, contentType } satisfies Answer),
      (error: unknown) => worker.send({ type: ANSWER, id, error: String(error) } satisfies Answer),
    )
  })
  return scrape
}

/** In a worker: a scrape that asks the primary for all workers' metrics. */
export function askPrimary(): Scrape {
  let next = 0
  const waiting = new Map<number, (answer: Answer) => void>()
  process.on('message', (message: Partial<Answer>) => {
    if (message?.type !== ANSWER || typeof message.id !== 'number') return
    waiting.get(message.id)?.(message as Answer)
  })
  return () =>
    new Promise((resolve, reject) => {
      const id = next++
      const timer = setTimeout(() => {
        waiting.delete(id)
        reject(new Error('the primary process did not answer with the metrics'))
      }, ASK_TIMEOUT_MS)
      waiting.set(id, (answer) => {
        clearTimeout(timer)
        waiting.delete(id)
        if (answer.text === undefined) reject(new Error(answer.error ?? 'no metrics'))
        else resolve({ text: answer.text, contentType: answer.contentType ?? 'text/plain' })
      })
      process.send?.({ type: ASK, id } satisfies Ask)
    })
}
