/**
 * What the key-usage flush costs concurrent requests. Starts the service as the benchmark does
 * (production settings, pinned to the server core) on a copy of the 2M-row dataset, uses every
 * one of the 50,000 keys once (the key-cache fill, so the first flush writes 50,000 last-used
 * times and 50,000 daily counts), then sends paced progress reads (each also writes a disclosure
 * record through the write queue) from bench/paced-client.mjs on the other core until the first
 * flush (USAGE_FLUSH_MS after start, read from the build) is well over.
 *
 * Reports latency of the requests sent around the flush (from 1 s before it is due to 9 s
 * after) beside the same figures for the requests before it, and the slowest moments.
 *
 *   node bench/usage-flush-stall.mjs [--runs 1] [--rate 1000] [--connections 8] [--dist <dir>]... [--build]
 */
import { spawn } from 'node:child_process'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { buildService, snapshotDist } from './lib/build-service.mjs'
import { BENCH_DIR, SERVICE_DIST } from './lib/paths.mjs'
import { LOAD_CPU, pinned } from './lib/pinning.mjs'
import { median } from './lib/scratch-database.mjs'
import { fillKeyCache, startOnScratchCopy } from './lib/scratch-server.mjs'
import { ensureSqliteDataset } from './lib/sqlite-dataset.mjs'
import { usageFlushSeconds } from './lib/service-constants.mjs'
import { ensureWrk } from './lib/wrk.mjs'

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '1' },
    rate: { type: 'string', default: '1000' },
    connections: { type: 'string', default: '8' },
    dist: { type: 'string', multiple: true },
    build: { type: 'boolean', default: false },
  },
})
const BEFORE_S = 1
const AFTER_S = 9

if (values.build) buildService()
else snapshotDist()
ensureWrk()
const files = await ensureSqliteDataset('rows-2m')
const builds = values.dist ?? [undefined]
const period = usageFlushSeconds()
if (period === undefined) throw new Error(`USAGE_FLUSH_MS not found in ${SERVICE_DIST}/app.js`)
const epochNow = () => performance.timeOrigin + performance.now()

function pacedClient(baseUrl, seconds) {
  const [command, args] = pinned(LOAD_CPU, process.execPath, [
    path.join(BENCH_DIR, 'paced-client.mjs'),
    baseUrl,
    files.pairs,
    String(seconds),
    values.connections,
    values.rate,
  ])
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.on('data', (chunk) => (out += chunk))
    child.on('close', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('BENCH_RESULT '))
      if (code !== 0 || line === undefined) reject(new Error(`paced client failed (exit ${code})`))
      else resolve(JSON.parse(line.slice('BENCH_RESULT '.length)).requests)
    })
  })
}

function stats(requests) {
  const latencies = requests.map((r) => r[1]).sort((a, b) => a - b)
  const at = (p) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? 0
  return {
    count: latencies.length,
    p50: at(0.5),
    p99: at(0.99),
    p999: at(0.999),
    max: at(1),
    over10: latencies.filter((l) => l > 10).length,
  }
}

async function once(dist) {
  const { label, server, stop } = await startOnScratchCopy(files, 'usage-flush-stall', dist)
  try {
    const readyAt = epochNow()
    const flushAt = readyAt + period * 1000
    await fillKeyCache(server, files, label)
    const fillEnd = epochNow()
    if (fillEnd > flushAt - 3000) return undefined
    const requests = await pacedClient(server.baseUrl, (flushAt + AFTER_S * 1000 - epochNow()) / 1000)
    const bad = requests.filter((r) => r[2] !== 200).length
    const around = requests.filter((r) => r[0] >= flushAt - BEFORE_S * 1000)
    const before = requests.filter((r) => r[0] >= fillEnd + 1000 && r[0] < flushAt - 2000)
    const slowest = [...around].sort((a, b) => b[1] - a[1]).slice(0, 5)
    return {
      label,
      around: stats(around),
      before: stats(before),
      bad,
      slowest: slowest.map((r) => `${((r[0] - flushAt) / 1000).toFixed(2)} s: ${r[1].toFixed(1)} ms`),
    }
  } finally {
    await stop()
  }
}

const format = (s) =>
  `p50 ${s.p50.toFixed(2)} ms, p99 ${s.p99.toFixed(2)} ms, p99.9 ${s.p999.toFixed(1)} ms, max ${s.max.toFixed(1)} ms, ` +
  `${s.over10} of ${s.count} over 10 ms`
const results = new Map(builds.map((dist) => [dist ?? 'dist', []]))
for (let run = 0; run < Number(values.runs); run++) {
  for (const dist of builds) {
    // On a busy machine the fill can run into the first flush; then start over.
    let result
    for (let attempt = 1; result === undefined; attempt++) {
      result = await once(dist)
      if (result === undefined)
        console.log(`  the fill ended too close to the first flush (attempt ${attempt}); starting again`)
      if (result === undefined && attempt === 3)
        throw new Error('the fill never ended in time: the machine is too busy')
    }
    results.get(result.label).push(result)
    console.log(`${result.label} run ${run + 1} (${result.bad} answers other than 200)`)
    console.log(`  before the flush: ${format(result.before)}`)
    console.log(`  around the flush: ${format(result.around)}`)
    console.log(`  slowest around it (time after the flush was due): ${result.slowest.join('; ')}`)
  }
}
console.log('\nmedians over runs, requests sent from 1 s before the flush was due to 9 s after')
for (const [label, rows] of results) {
  const m = (field) => median(rows.map((r) => r.around[field]))
  console.log(
    `${label.padEnd(24)} p99 ${m('p99').toFixed(2)} ms, max ${m('max').toFixed(1)} ms, p50 ${m('p50').toFixed(2)} ms`,
  )
}
