/**
 * One scenario against one running server: a warm-up run (key cache filled, JIT warm; its
 * numbers are dropped), then the measured run, with the server's peak RSS and CPU sampled over
 * the measured run only.
 */
import { startSampling } from './process-stats.mjs'
import { runLatencyClient, runWrk } from './wrk.mjs'

export function benchSettings(env = process.env) {
  const number = (name, fallback, min) => {
    const raw = env[name]
    if (raw === undefined || raw === '') return fallback
    const value = Number(raw)
    if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer >= ${min} (got "${raw}")`)
    return value
  }
  return {
    duration: number('BENCH_DURATION', 10, 1),
    warmup: number('BENCH_WARMUP', 3, 0),
    connections: number('BENCH_CONNECTIONS', 64, 1),
    threads: number('BENCH_THREADS', 1, 1),
  }
}

export async function measure(server, scenario, settings) {
  // Node's client for the cross-check, the open-loop generator for a fixed `rate`, wrk otherwise.
  const generator = scenario.client === 'node' || scenario.rate !== undefined ? runLatencyClient : runWrk
  const run = (seconds) =>
    generator({
      baseUrl: server.baseUrl,
      seconds,
      connections: settings.connections,
      threads: settings.threads,
      lua: scenario.lua,
      expect: scenario.expect,
      rate: scenario.rate,
    })
  let warmup
  if (settings.warmup > 0) warmup = await run(settings.warmup)
  const sampling = startSampling(server.pid)
  const result = await run(settings.duration)
  return {
    ...result,
    ...sampling.finish(),
    connections: settings.connections,
    warmupStatuses: warmup?.statuses,
    warmupMaxMs: warmup?.latencyMs.max,
  }
}

export function describe(row) {
  const statuses = Object.entries(row.statuses)
    .map(([status, count]) => `${status}:${count}`)
    .join(' ')
  return (
    `${Math.round(row.rps).toLocaleString('en').padStart(7)} req/s  p50 ${row.latencyMs.p50.toFixed(2)}  p99 ${row.latencyMs.p99.toFixed(2)}  ` +
    `p99.9 ${row.latencyMs.p999.toFixed(2)} ms  errors ${row.errors}  rss ${row.peakRssMb?.toFixed(0) ?? '-'} MB  ` +
    `cpu ${Math.round((row.serverCpu ?? 0) * 100)}%  [${statuses}]`
  )
}
