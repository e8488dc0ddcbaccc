/**
 * Ready time on an existing database: spawn to the first /readyz 200 of the service started as
 * the benchmark starts it (production settings, pinned to the server core), on a copy of the
 * 2M-row dataset that earlier starts have already opened (WAL mode set, migrations current).
 *
 *   node bench/startup-time.mjs [--runs 5] [--dist <dir>]... [--build]
 *
 * Each --dist is a built dist/ inside this checkout; several are started in turn, run by run,
 * so they share the machine's load. Prints every start and the median per build.
 */
import { parseArgs } from 'node:util'
import { buildService, snapshotDist } from './lib/build-service.mjs'
import { SERVER_CPU } from './lib/pinning.mjs'
import { cpuSeconds } from './lib/process-stats.mjs'
import { median, removeScratch, scratchCopy, serverScript } from './lib/scratch-database.mjs'
import { serviceEnv, startServer } from './lib/server-process.mjs'
import { ensureSqliteDataset } from './lib/sqlite-dataset.mjs'

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '5' },
    dist: { type: 'string', multiple: true },
    build: { type: 'boolean', default: false },
  },
})

if (values.build) buildService()
else snapshotDist()
const files = await ensureSqliteDataset('rows-2m')
const builds = values.dist ?? [undefined]
const database = scratchCopy(files.database, 'startup-time')
const env = serviceEnv({ DATABASE_URL: `sqlite:${database}` })
const start = (dist) => startServer({ label: dist ?? 'dist', env, cpu: SERVER_CPU, script: serverScript(dist) })
const times = new Map(builds.map((dist) => [dist ?? 'dist', []]))

try {
  // One start of each build before measuring: the first open of the copy converts nothing
  // then, and the files are in the page cache for every measured start alike.
  for (const dist of builds) await (await start(dist)).stop()
  for (let run = 0; run < Number(values.runs); run++) {
    for (const dist of builds) {
      const server = await start(dist)
      // CPU time until ready (both threads): what the start costs, whatever else the core ran.
      const cpuMs = cpuSeconds(server.pid) * 1000
      await server.stop()
      times.get(server.label).push({ readyMs: server.readyMs, cpuMs })
      console.log(
        `${server.label} run ${run + 1}: ready in ${server.readyMs.toFixed(0)} ms, ${cpuMs.toFixed(0)} ms of CPU`,
      )
    }
  }
} finally {
  removeScratch(database)
}

console.log('\nmedians              spawn to the first /readyz 200    CPU until ready (10 ms ticks)')
for (const [label, runs] of times) {
  const ready = runs.map((r) => r.readyMs)
  const cpu = runs.map((r) => r.cpuMs)
  console.log(
    `${label.padEnd(24)} ${median(ready).toFixed(0).padStart(6)} ms (${ready.map((t) => t.toFixed(0)).join(', ')})` +
      `   ${median(cpu).toFixed(0).padStart(6)} ms (${cpu.map((t) => t.toFixed(0)).join(', ')})`,
  )
}
