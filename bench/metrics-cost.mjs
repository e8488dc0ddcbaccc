/**
 * What metrics cost a catalog request: the service with metrics on (METRICS_TOKEN set, every
 * answer counted and timed) against the same build with them off, both running at once on the
 * same core, each loaded by its own wrk on the other core: side by side, both share whatever else
 * the machine does at that moment, which rounds measured one after the other did not, by more than
 * the cost being measured (docs/performance.md, "Metrics"). Each round gives each side's req/s per
 * CPU-second of its server and their ratio; the figure is the median of the rounds' ratios.
 * `--interleaved` measures one server at a time, alternating, as before.
 *
 *   node bench/metrics-cost.mjs [--rounds 9] [--seconds 5] [--only tiers,lesson] [--interleaved]
 *
 * `npm run bench` runs it too (BENCH_ONLY=metrics-cost for it alone), on the bench's dataset.
 */
import fs from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'

const TOKEN = 'bench-metrics-token-0123456789abcdef0123456789'
const SLUG = 'explorer/e1-robots-follow-instructions'
const PATHS = { tiers: '/api/v1/tiers', lesson: `/api/v1/lessons/${SLUG}`, lessons: '/api/v1/lessons' }
/** The least share of the catalog's req/s per CPU that metrics may leave (docs/performance.md). */
export const METRICS_TARGET = 0.95

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

/**
 * Runs the comparison on `database` (copied afresh for each server) with the keys in `keysFile`;
 * resolves with one result per scenario: each side's median req/s and req/s per CPU, and the
 * median of the rounds' on / off ratios.
 */
export async function metricsCost({
  database,
  keysFile,
  rounds = 9,
  seconds = 5,
  only = ['tiers', 'lesson'],
  interleaved = false,
  log,
}) {
  const { measure } = await import('./lib/measure.mjs')
  const { serviceEnv, startServer } = await import('./lib/server-process.mjs')
  const { SERVER_CPU } = await import('./lib/pinning.mjs')
  const settings = { duration: seconds, warmup: 2, connections: 64, threads: 1 }
  const sides = [
    { label: 'off', env: {} },
    { label: 'on', env: { METRICS_TOKEN: TOKEN } },
  ]
  const copies = sides.map((side) => `${database}.metrics-${side.label}.db`)
  const samples = new Map()
  const ratios = new Map()
  const start = async (side, index) => {
    const copy = copies[index]
    fs.copyFileSync(database, copy)
    for (const suffix of ['-wal', '-shm']) fs.rmSync(copy + suffix, { force: true })
    return startServer({
      label: `metrics ${side.label}`,
      env: serviceEnv({ DATABASE_URL: `sqlite:${copy}`, RATE_LIMIT: '1000000', ...side.env }),
      cpu: SERVER_CPU,
    })
  }
  const load = async (server, side, id, round) => {
    const row = await measure(
      server,
      { lua: { mode: 'catalog', file: keysFile, path: PATHS[id] }, expect: [200] },
      settings,
    )
    const key = `${id}/${side.label}`
    if (!samples.has(key)) samples.set(key, [])
    const sample = { round, rps: row.rps, perCpu: row.rps / Math.max(row.serverCpu ?? 1, 0.01) }
    samples.get(key).push(sample)
    log(
      `round ${round + 1} metrics ${side.label} ${id}: ${Math.round(row.rps)} req/s at ${Math.round((row.serverCpu ?? 0) * 100)}% CPU`,
    )
    return sample
  }
  const counted = async (server) => {
    // The counters moved: the comparison measured what it says.
    const scrape = await fetch(`${server.baseUrl}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })
    if (!(await scrape.text()).includes('http_requests_total{route="/api/v1/'))
      throw new Error('metrics on, but no catalog request was counted')
  }
  const ratio = (id, off, on) => {
    if (!ratios.has(id)) ratios.set(id, [])
    ratios.get(id).push(on.perCpu / off.perCpu)
  }
  for (let round = 0; round < rounds; round++) {
    if (interleaved) {
      const order = round % 2 === 0 ? sides : [...sides].reverse()
      const got = {}
      for (const side of order) {
        const server = await start(side, sides.indexOf(side))
        try {
          for (const id of only) got[`${id}/${side.label}`] = await load(server, side, id, round)
          if (side.label === 'on') await counted(server)
        } finally {
          await server.stop()
        }
      }
      for (const id of only) ratio(id, got[`${id}/off`], got[`${id}/on`])
      continue
    }
    const servers = []
    try {
      for (const [index, side] of sides.entries()) servers.push(await start(side, index))
      for (const id of only) {
        const [off, on] = await Promise.all(servers.map((server, index) => load(server, sides[index], id, round)))
        ratio(id, off, on)
      }
      await counted(servers[1])
    } finally {
      for (const server of servers) await server.stop()
    }
  }
  for (const copy of copies) for (const suffix of ['', '-wal', '-shm']) fs.rmSync(copy + suffix, { force: true })
  return only.map((id) => {
    const [off, on] = ['off', 'on'].map((label) => samples.get(`${id}/${label}`))
    return {
      id,
      rounds,
      seconds,
      mode: interleaved ? 'interleaved' : 'side by side',
      offRps: median(off.map((s) => s.rps)),
      onRps: median(on.map((s) => s.rps)),
      offPerCpu: median(off.map((s) => s.perCpu)),
      onPerCpu: median(on.map((s) => s.perCpu)),
      ratios: ratios.get(id),
      ratio: median(ratios.get(id)),
    }
  })
}

/**
 * The CPU time one counted answer adds on the fast path, in nanoseconds: what `answered` does
 * with metrics on (two clock reads, the channel, the tally), a million times in this process,
 * against dist/'s compiled modules. Far less noisy than the req/s comparison on a shared machine.
 */
export async function recordCost(calls = 1_000_000) {
  const { ROOT } = await import('./lib/paths.mjs')
  const dist = (file) => pathToFileURL(path.join(ROOT, 'dist', file)).href
  const { recordRequest, requestsObserved } = await import(dist('instrumentation/metrics-channels.js'))
  const { Metrics } = await import(dist('observability/metrics.js'))
  const metrics = new Metrics({ engine: 'sqlite', db: undefined })
  const routes = ['/api/v1/tiers', '/api/v1/lessons', '/api/v1/lessons/*']
  const run = (n) => {
    for (let i = 0; i < n; i++) {
      const started = requestsObserved() ? performance.now() : 0
      if (requestsObserved()) recordRequest(routes[i % 3], 'GET', 200, performance.now() - started)
    }
  }
  run(100_000)
  const cpu = process.cpuUsage()
  run(calls)
  const used = process.cpuUsage(cpu)
  metrics.close()
  return ((used.user + used.system) * 1000) / calls
}

/** The results as a Markdown table. */
export function metricsCostTable(results) {
  const n = (x) => Math.round(x).toLocaleString('en')
  return [
    '| scenario | off req/s | on req/s | off req/s per CPU | on req/s per CPU | on / off per CPU (median of rounds) | rounds |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...results.map(
      (r) =>
        `| ${r.id} | ${n(r.offRps)} | ${n(r.onRps)} | ${n(r.offPerCpu)} | ${n(r.onPerCpu)} | ${r.ratio.toFixed(3)} | ${r.ratios.map((x) => x.toFixed(2)).join(' ')} |`,
    ),
  ].join('\n')
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { values } = parseArgs({
    options: {
      rounds: { type: 'string', default: '9' },
      seconds: { type: 'string', default: '5' },
      only: { type: 'string', default: 'tiers,lesson' },
      interleaved: { type: 'boolean', default: false },
    },
  })
  const { buildService } = await import('./lib/build-service.mjs')
  const { ensureWrk } = await import('./lib/wrk.mjs')
  buildService()
  ensureWrk()
  const { ensureSqliteDataset, resetDataset } = await import('./lib/sqlite-dataset.mjs')
  const dataset = await ensureSqliteDataset('rows-2m', console.error)
  resetDataset(dataset.database)
  // 2,000 keys: all cached after the warm-up, so the rows measure the cached path alone.
  const keysFile = path.join(path.dirname(dataset.database), 'metrics-cost-keys.txt')
  fs.writeFileSync(keysFile, `${fs.readFileSync(dataset.keys, 'utf8').split('\n').slice(0, 2000).join('\n')}\n`)
  const results = await metricsCost({
    database: dataset.database,
    keysFile,
    rounds: Number(values.rounds),
    seconds: Number(values.seconds),
    only: values.only.split(','),
    interleaved: values.interleaved,
    log: console.error,
  })
  console.log(metricsCostTable(results))
  const worst = Math.min(...results.map((r) => r.ratio))
  console.log(`\nworst on / off: ${worst.toFixed(3)} (target >= ${METRICS_TARGET})`)
  const ns = await recordCost()
  const share = (ns * Math.max(...results.map((r) => r.offPerCpu))) / 1e9
  console.log(`one counted answer: ${ns.toFixed(0)} ns of CPU, ${(share * 100).toFixed(2)}% of a catalog answer`)
}
