/**
 * The request counter and latency histogram, kept in plain numbers and turned into Prometheus
 * samples only when scraped. prom-client's own Counter and Histogram hash and check their labels
 * on every call, which on the hottest requests cost several percent of a catalog answer; here a
 * request is two map lookups and a few additions. The samples have the shape prom-client's own
 * metrics give (`get()`), so the registry, its text format and the cluster aggregator treat them
 * alike.
 */
import type { Metric, Registry } from 'prom-client'

/** Seconds; from a cached catalog read (well under a millisecond) to a slow storage write. */
export const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]
const STATUS_CLASSES = ['other', '1xx', '2xx', '3xx', '4xx', '5xx'] as const

interface Tally {
  count: number
  sum: number
  /** Observations per bucket (not cumulative); the last counts those above every bound. */
  readonly buckets: Float64Array
}

type Labels = { route: string; method: string; status_class: string }
interface Sample {
  labels: Record<string, string | number>
  value: number
  metricName?: string
}

export class RequestMetrics {
  /** route -> method -> one tally per status class. */
  readonly #tallies = new Map<string, Map<string, (Tally | undefined)[]>>()

  /** One answer: its route template, method, status and time taken. */
  record(route: string, method: string, status: number, seconds: number): void {
    let byMethod = this.#tallies.get(route)
    if (byMethod === undefined) this.#tallies.set(route, (byMethod = new Map()))
    let byClass = byMethod.get(method)
    if (byClass === undefined) byMethod.set(method, (byClass = []))
    const statusClass = status >= 100 && status < 600 ? Math.floor(status / 100) : 0
    let tally = byClass[statusClass]
    if (tally === undefined)
      byClass[statusClass] = tally = { count: 0, sum: 0, buckets: new Float64Array(LATENCY_BUCKETS.length + 1) }
    tally.count++
    tally.sum += seconds
    let bucket = 0
    while (bucket < LATENCY_BUCKETS.length && seconds > LATENCY_BUCKETS[bucket]!) bucket++
    tally.buckets[bucket]!++
  }

  /** Registers `http_requests_total` and `http_request_duration_seconds` with `registry`. */
  register(registry: Registry): void {
    registry.registerMetric(
      this.#metric(
        'http_requests_total',
        'HTTP requests answered, by route template, method and status class, on both request paths.',
        'counter',
        (labels, tally) => [{ labels, value: tally.count }],
      ),
    )
    registry.registerMetric(
      this.#metric(
        'http_request_duration_seconds',
        'Time from the request to its answer, by route template, method and status class.',
        'histogram',
        (labels, tally) => {
          const name = 'http_request_duration_seconds'
          const samples: Sample[] = []
          let cumulative = 0
          for (let i = 0; i <= LATENCY_BUCKETS.length; i++) {
            cumulative += tally.buckets[i]!
            const le = i < LATENCY_BUCKETS.length ? LATENCY_BUCKETS[i]! : '+Inf'
            samples.push({ labels: { ...labels, le }, value: cumulative, metricName: `${name}_bucket` })
          }
          samples.push({ labels, value: tally.sum, metricName: `${name}_sum` })
          samples.push({ labels, value: tally.count, metricName: `${name}_count` })
          return samples
        },
      ),
    )
  }

  #metric(name: string, help: string, type: 'counter' | 'histogram', samples: (l: Labels, t: Tally) => Sample[]) {
    const get = async () => {
      const values: Sample[] = []
      for (const [route, byMethod] of this.#tallies)
        for (const [method, byClass] of byMethod)
          byClass.forEach((tally, index) => {
            if (tally !== undefined)
              values.push(...samples({ route, method, status_class: STATUS_CLASSES[index]! }, tally))
          })
      return { name, help, type, values, aggregator: 'sum' as const }
    }
    // The shape the registry reads of every metric (name, help, type, get), as prom-client's own give it.
    return { name, help, type, get, reset: () => this.#tallies.clear() } as unknown as Metric<string>
  }
}
