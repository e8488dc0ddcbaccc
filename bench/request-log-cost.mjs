/**
 * What the request log costs: the service with REQUEST_LOG on against the same build with it off,
 * on catalog reads (tiers), progress reads and enrolls, in req/s per CPU-second of the server.
 * Each round starts both sides afresh on their own copy of the dataset and measures them one after
 * the other on the same core (the order alternates between rounds), each loaded by wrk on the other
 * core; `--side-by-side` runs both at once instead, each with its own wrk, as metrics-cost.mjs
 * does. The figure per scenario is the median of the rounds' on / off ratios.
 *
 *   node bench/request-log-cost.mjs [--rounds 3] [--seconds 5] [--only tiers,progress,enroll] [--side-by-side] [--same]
 *
 * `--same` runs the log off on both sides (an A/A run): the method's own spread.
 *
 * `npm run bench` runs it too (BENCH_ONLY=request-log-cost for it alone), on the bench's dataset.
 */
import fs from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'

/** The least share of req/s per CPU that the request log may leave (docs/performance.md). */
export const REQUEST_LOG_TARGET = 0.95
export const REQUEST_LOG_SCENARIOS = ['tiers', 'progress', 'enroll']

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

function scenario(id, files) {
  if (id === 'tiers') return { lua: { mode: 'catalog', file: files.keys, path: '/api/v1/tiers' }, expect: [200] }
  if (id === 'progress') return { lua: { mode: 'progress', file: files.pairs }, expect: [200] }
  if (id === 'enroll') return { lua: { mode: 'enroll', file: files.pairs }, expect: [200] }
  throw new Error(`unknown scenario ${id}`)
}

/** Entries the "on" side's database holds once its server stopped: the comparison measured what it says. */
async function loggedEntries(file) {
  const { default: SQLite } = await import('better-sqlite3')
  const db = new SQLite(file, { readonly: true })
  try {
    return db.prepare('select count(*) as n from request_log').get().n
  } finally {
    db.close()
  }
}

/**
 * Runs the comparison on `database` (copied afresh for each server) with the keys in `keysFile`
 * and the key-student pairs in `pairsFile`; resolves with one result per scenario: each side's
 * median req/s and req/s per CPU, the rounds' on / off ratios and their median.
 */
export async function requestLogCost({
  database,
  keysFile,
  pairsFile,
  rounds = 3,
  seconds = 5,
  only = REQUEST_LOG_SCENARIOS,
  sideBySide = false,
  same = false,
  log,
}) {
  const { measure } = await import('./lib/measure.mjs')
  const { serviceEnv, startServer } = await import('./lib/server-process.mjs')
  const { SERVER_CPU } = await import('./lib/pinning.mjs')
  const settings = { duration: seconds, warmup: 2, connections: 64, threads: 1 }
  const files = { keys: keysFile, pairs: pairsFile }
  // `same`: the log off on both sides (an A/A run), which measures the method's own spread.
  const sides = [
    { label: 'off', env: { REQUEST_LOG: 'off' } },
    { label: 'on', env: { REQUEST_LOG: same ? 'off' : 'on' } },
  ]
  const copies = sides.map((side) => `${database}.request-log-${side.label}.db`)
  const samples = new Map()
  const ratios = new Map(only.map((id) => [id, []]))
  const start = async (side) => {
    const copy = copies[sides.indexOf(side)]
    for (const suffix of ['', '-wal', '-shm']) fs.rmSync(copy + suffix, { force: true })
    fs.copyFileSync(database, copy)
    return startServer({
      label: `request log ${side.label}`,
      env: serviceEnv({ DATABASE_URL: `sqlite:${copy}`, RATE_LIMIT: '1000000', ...side.env }),
      cpu: SERVER_CPU,
    })
  }
  const load = async (server, side, id, round) => {
    const row = await measure(server, scenario(id, files), settings)
    const sample = { rps: row.rps, perCpu: row.rps / Math.max(row.serverCpu ?? 1, 0.01) }
    const key = `${id}/${side.label}`
    samples.set(key, [...(samples.get(key) ?? []), sample])
    log(
      `round ${round + 1} request log ${side.label} ${id}: ${Math.round(row.rps)} req/s at ${Math.round((row.serverCpu ?? 0) * 100)}% CPU`,
    )
    return sample
  }
  const stopAndCheck = async (server, side) => {
    await server.stop()
    if (side.label === 'on' && !same && (await loggedEntries(copies[1])) === 0)
      throw new Error('request log on, but no entry was written')
  }
  for (let round = 0; round < rounds; round++) {
    const got = {}
    if (sideBySide) {
      const servers = []
      try {
        for (const side of sides) servers.push(await start(side))
        for (const id of only) {
          const pair = await Promise.all(servers.map((server, i) => load(server, sides[i], id, round)))
          got[`${id}/off`] = pair[0]
          got[`${id}/on`] = pair[1]
        }
      } finally {
        for (const [i, server] of servers.entries()) await stopAndCheck(server, sides[i])
      }
    } else {
      for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
        const server = await start(side)
        try {
          for (const id of only) got[`${id}/${side.label}`] = await load(server, side, id, round)
        } finally {
          await stopAndCheck(server, side)
        }
      }
    }
    for (const id of only) ratios.get(id).push(got[`${id}/on`].perCpu / got[`${id}/off`].perCpu)
  }
  for (const copy of copies) for (const suffix of ['', '-wal', '-shm']) fs.rmSync(copy + suffix, { force: true })
  return only.map((id) => {
    const [off, on] = ['off', 'on'].map((label) => samples.get(`${id}/${label}`))
    return {
      id,
      rounds,
      seconds,
      mode: sideBySide ? 'side by side' : 'interleaved',
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
 * 2,000 keys and 2,000 key-student pairs of the dataset, written beside it: all cached after the
 * warm-up, so the rounds measure the cached path alone, as metrics-cost.mjs does.
 */
export function requestLogFiles(dataset) {
  const head = (file, out) => {
    fs.writeFileSync(out, `${fs.readFileSync(file, 'utf8').split('\n').slice(0, 2000).join('\n')}\n`)
    return out
  }
  return {
    keysFile: head(dataset.keys, path.join(path.dirname(dataset.database), 'request-log-keys.txt')),
    pairsFile: head(dataset.pairs, path.join(path.dirname(dataset.database), 'request-log-pairs.txt')),
  }
}

/**
 * The CPU one entry costs, in nanoseconds, in this process against dist/'s compiled modules (far
 * less noisy than the req/s comparison on a shared machine, and blind to what the server's caches
 * make of it): `record`, what the request path does (the two clock reads of its latency, then the
 * entry into the window); `flush`, making batches of 50,000 entries over 500 organisations and
 * writing them to a fresh SQLite database through its write queue (every thread of this process:
 * the checkpointer's too).
 */
export async function entryCost({ entries = 50_000, rounds = 8 } = {}) {
  const { ROOT } = await import('./lib/paths.mjs')
  const os = await import('node:os')
  const dist = (file) => pathToFileURL(path.join(ROOT, 'dist', file)).href
  const { RequestLog } = await import(dist('services/request-log.js'))
  const { requestIdAt } = await import(dist('domain/request-id.js'))
  const { openStorage } = await import(dist('storage/connection.js'))
  const { migrate } = await import(dist('storage/migrate.js'))
  const keys = Array.from({ length: 2000 }, (_, i) => ({
    keyId: `${String(i).padStart(8, '0')}-0000-4000-8000-000000000000`,
    organisation: { id: `${String(i % 500).padStart(8, '0')}-1111-4000-8000-000000000000` },
  }))
  const cpu = () => {
    const used = process.cpuUsage()
    return used.user + used.system
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'request-log-cost-'))
  const storage = openStorage(`sqlite:${path.join(dir, 'log.db')}`)
  let recordUs = 0
  let flushUs = 0
  try {
    await migrate(storage)
    const log = new RequestLog({ writes: storage.writes, log: { warn() {} } })
    for (let round = 0; round < rounds; round++) {
      // Made before, as a request's id is made before its answer.
      const ids = Array.from({ length: entries }, (_, i) => requestIdAt(Date.now() + Math.floor(i / 10)))
      let before = cpu()
      for (let i = 0; i < entries; i++) {
        const started = performance.now()
        log.record(keys[i % 2000], 'GET', '/api/v1/tiers', 200, undefined, performance.now() - started, ids[i], '::1')
      }
      recordUs += cpu() - before
      before = cpu()
      await log.flush()
      flushUs += cpu() - before
    }
  } finally {
    await storage.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
  return { record: (recordUs * 1000) / (entries * rounds), flush: (flushUs * 1000) / (entries * rounds) }
}

/** The results as a Markdown table. */
export function requestLogCostTable(results) {
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
      rounds: { type: 'string', default: '3' },
      seconds: { type: 'string', default: '5' },
      only: { type: 'string', default: REQUEST_LOG_SCENARIOS.join(',') },
      'side-by-side': { type: 'boolean', default: false },
      same: { type: 'boolean', default: false },
    },
  })
  const { buildService } = await import('./lib/build-service.mjs')
  const { ensureWrk } = await import('./lib/wrk.mjs')
  buildService()
  ensureWrk()
  const { ensureSqliteDataset, resetDataset } = await import('./lib/sqlite-dataset.mjs')
  const dataset = await ensureSqliteDataset('rows-2m', console.error)
  resetDataset(dataset.database)
  const { keysFile, pairsFile } = requestLogFiles(dataset)
  const results = await requestLogCost({
    database: dataset.database,
    keysFile,
    pairsFile,
    rounds: Number(values.rounds),
    seconds: Number(values.seconds),
    only: values.only.split(','),
    sideBySide: values['side-by-side'],
    same: values.same,
    log: console.error,
  })
  console.log(requestLogCostTable(results))
  const worst = Math.min(...results.map((r) => r.ratio))
  console.log(`\nworst on / off: ${worst.toFixed(3)} (target >= ${REQUEST_LOG_TARGET})`)
  const cost = await entryCost()
  console.log(
    `one entry: ${cost.record.toFixed(0)} ns of CPU on the request path, ${cost.flush.toFixed(0)} ns to batch and write (SQLite)`,
  )
}
