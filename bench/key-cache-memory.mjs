/**
 * Memory with every key cached: starts the service as the benchmark does (production settings,
 * pinned to the server core) on a copy of the 2M-row dataset, sends one /api/v1/tiers request
 * per key (50,000, the benchmark's key-cache fill, wrk on the other core), then reads the
 * server's resident memory from /proc: VmRSS at ready, VmHWM (peak since spawn) and VmRSS after
 * the fill, and VmRSS again after a few idle seconds.
 *
 *   node bench/key-cache-memory.mjs [--runs 3] [--dist <dir>]... [--build]
 *
 * Each --dist is a built dist/ inside this checkout (e.g. a copy of an earlier build under
 * bench/.data/); several are measured in turn, run by run, so they share the machine's load.
 * Without --dist: this checkout's dist/ (rebuilt first with --build).
 */
import { parseArgs } from 'node:util'
import { buildService, snapshotDist } from './lib/build-service.mjs'
import { SERVER_CPU } from './lib/pinning.mjs'
import { peakRssMb, rssMb } from './lib/process-stats.mjs'
import { median, removeScratch, scratchCopy, serverScript } from './lib/scratch-database.mjs'
import { serviceEnv, startServer } from './lib/server-process.mjs'
import { ensureSqliteDataset } from './lib/sqlite-dataset.mjs'
import { keyCacheFill } from './lib/scenarios.mjs'
import { ensureWrk, runWrk } from './lib/wrk.mjs'

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    dist: { type: 'string', multiple: true },
    build: { type: 'boolean', default: false },
  },
})
const IDLE_SECONDS = 5

if (values.build) buildService()
else snapshotDist()
ensureWrk()
const files = await ensureSqliteDataset('rows-2m')
const builds = values.dist ?? [undefined]
const results = new Map(builds.map((dist) => [dist ?? 'dist', []]))

for (let run = 0; run < Number(values.runs); run++) {
  for (const dist of builds) {
    const label = dist ?? 'dist'
    const database = scratchCopy(files.database, 'key-cache-memory')
    const server = await startServer({
      label,
      env: serviceEnv({ DATABASE_URL: `sqlite:${database}` }),
      cpu: SERVER_CPU,
      script: serverScript(dist),
    })
    try {
      const atReady = rssMb(server.pid)
      const fill = keyCacheFill({ file: files.keys, count: files.manifest.keys })
      const row = await runWrk({
        baseUrl: server.baseUrl,
        seconds: 600,
        connections: 64,
        threads: 1,
        lua: { ...fill.lua, limit: fill.count },
        expect: fill.expect,
      })
      // A few timeouts on a busy machine leave those keys uncached; more would change what is measured.
      if (row.errors > fill.count / 100) throw new Error(`${label}: the fill had ${row.errors} errors`)
      if (row.errors > 0) console.log(`  (${label}: ${row.errors} of the fill's requests failed)`)
      const peak = peakRssMb(server.pid)
      const afterFill = rssMb(server.pid)
      await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000))
      const idle = rssMb(server.pid)
      const result = { atReady, peak, afterFill, idle, fillRps: row.rps }
      results.get(label).push(result)
      console.log(
        `${label} run ${run + 1}: ready ${atReady.toFixed(0)} MB, peak ${peak.toFixed(0)} MB, after fill ` +
          `${afterFill.toFixed(0)} MB, ${IDLE_SECONDS} s later ${idle.toFixed(0)} MB (fill ${Math.round(row.rps)} req/s)`,
      )
    } finally {
      await server.stop()
      removeScratch(database)
    }
  }
}

console.log('\nmedians (MB)      ready   peak (VmHWM)   after fill   idle   peak - ready')
for (const [label, rows] of results) {
  const m = (field) => median(rows.map((r) => r[field]))
  console.log(
    `${label.padEnd(16)} ${m('atReady').toFixed(0).padStart(6)} ${m('peak').toFixed(0).padStart(14)} ` +
      `${m('afterFill').toFixed(0).padStart(12)} ${m('idle').toFixed(0).padStart(6)} ` +
      `${median(rows.map((r) => r.peak - r.atReady))
        .toFixed(0)
        .padStart(14)}`,
  )
}
