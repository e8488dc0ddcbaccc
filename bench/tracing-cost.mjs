/**
 * What tracing costs: ready time and the server's CPU per request, untraced (fast path on, and
 * FAST_PATH=off, which is how a traced server runs) and traced (OTEL_EXPORTER_OTLP_ENDPOINT set,
 * exporting to a sink in this process that answers every OTLP/HTTP post at once). The builds are
 * the same dist/; the three settings are started in turn, round by round, so they share the
 * machine's load.
 *
 *   npm run build && node bench/tracing-cost.mjs [--rounds 5] [--requests 2000] [--baseline <dir>]
 *
 * `--baseline` names another checkout, built, whose dist/server.js is started untraced as a
 * fourth setting: the same code before tracing existed, to show what an untraced server pays.
 *
 * Requests: GET /api/v1/tiers and POST /api/v1/students/:id/enroll with the demo keys, eight
 * at a time over kept-alive connections, after a quarter as many unmeasured; the figure is the server process's CPU time (user and
 * system, from /proc) over the requests, divided by their number.
 */
import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { CATALOG_DIR, DIST } from './lib/paths.mjs'
import { SERVER_CPU } from './lib/pinning.mjs'
import { cpuSeconds } from './lib/process-stats.mjs'
import { median } from './lib/scratch-database.mjs'
import { serviceEnv, startServer } from './lib/server-process.mjs'

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    requests: { type: 'string', default: '2000' },
    baseline: { type: 'string' },
  },
})
const ROUNDS = Number(values.rounds)
const REQUESTS = Number(values.requests)
const CONCURRENCY = 8

const sink = http.createServer((request, response) => {
  request.resume()
  request.on('end', () => response.writeHead(200, { 'content-type': 'application/json' }).end('{}'))
})
await new Promise((resolve) => sink.listen(0, '127.0.0.1', resolve))
const sinkUrl = `http://127.0.0.1:${sink.address().port}`

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tracing-cost-'))
const base = {
  DATABASE_URL: `sqlite:${path.join(dir, 'bench.db')}`,
  CATALOG_DIR,
  RATE_LIMIT: '1000000',
  OTEL_EXPORTER_OTLP_ENDPOINT: '',
}
const script = path.join(DIST, 'server.js')
const MODES = {
  untraced: { env: {}, script },
  'untraced, FAST_PATH=off': { env: { FAST_PATH: 'off' }, script },
  traced: { env: { OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl }, script },
  ...(values.baseline === undefined
    ? {}
    : { 'baseline, untraced': { env: {}, script: path.resolve(values.baseline, 'dist', 'server.js') } }),
}

/** The demo data, seeded by one start; its keys and student come from the banner it prints. */
async function seed() {
  const server = await startServer({ label: 'seed', env: serviceEnv({ ...base, SEED_DEMO: 'true' }), script })
  await server.stop()
  const out = server.log()
  return {
    catalogKey: /Demo catalog key[^\n]*\n\s+(cur_live_\w+)/.exec(out)[1],
    studentKey: /Demo student key[^\n]*\n\s+(cur_live_\w+)/.exec(out)[1],
    studentId: /Demo student: \w+ \(\w+\), id ([0-9a-f-]{36})/.exec(out)[1],
  }
}

async function load(server, count, request) {
  let next = 0
  const worker = async () => {
    while (next < count) {
      const i = next++
      const response = await request(i)
      await response.arrayBuffer()
      if (response.status !== 200) throw new Error(`${server.label}: status ${response.status}`)
    }
  }
  const before = cpuSeconds(server.pid)
  await Promise.all(Array.from({ length: CONCURRENCY }, worker))
  return ((cpuSeconds(server.pid) - before) * 1e6) / count
}

const demo = await seed()
const results = new Map(Object.keys(MODES).map((mode) => [mode, []]))
const tiers = ['explorer', 'builder']
try {
  for (let round = 0; round < ROUNDS; round++) {
    const order = Object.keys(MODES)
    for (let i = 0; i < round % order.length; i++) order.push(order.shift())
    for (const mode of order) {
      const server = await startServer({
        label: mode,
        env: serviceEnv({ ...base, ...MODES[mode].env }),
        cpu: SERVER_CPU,
        script: MODES[mode].script,
      })
      try {
        const tiersRequest = () =>
          fetch(`${server.baseUrl}/api/v1/tiers`, { headers: { authorization: `Bearer ${demo.catalogKey}` } })
        // Not measured: the first requests compile what the rest run.
        await load(server, REQUESTS / 4, tiersRequest)
        const catalog = await load(server, REQUESTS, tiersRequest)
        const enroll = await load(server, REQUESTS / 4, (i) =>
          fetch(`${server.baseUrl}/api/v1/students/${demo.studentId}/enroll`, {
            method: 'POST',
            headers: { authorization: `Bearer ${demo.studentKey}`, 'content-type': 'application/json' },
            body: JSON.stringify({ tier: tiers[i % 2] }),
          }),
        )
        results.get(mode).push({ readyMs: server.readyMs, catalog, enroll })
        console.log(
          `round ${round + 1} ${mode}: ready ${server.readyMs.toFixed(0)} ms, ` +
            `catalog ${catalog.toFixed(0)} us, enroll ${enroll.toFixed(0)} us of server CPU per request`,
        )
      } finally {
        await server.stop()
      }
    }
  }
} finally {
  sink.close()
  fs.rmSync(dir, { recursive: true, force: true })
}

console.log('\nmedians                      ready    catalog CPU/request    enroll CPU/request')
for (const [mode, runs] of results) {
  const m = (key) => median(runs.map((run) => run[key]))
  console.log(
    `${mode.padEnd(26)} ${m('readyMs').toFixed(0).padStart(5)} ms ${m('catalog').toFixed(0).padStart(14)} us ${m('enroll').toFixed(0).padStart(17)} us`,
  )
}
