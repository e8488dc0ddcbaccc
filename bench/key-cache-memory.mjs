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
import { peakRssMb, rssMb } from './lib/process-stats.mjs'
import { median } from './lib/scratch-database.mjs'
import { fillKeyCache, startOnScratchCopy } from './lib/scratch-server.mjs'
import { ensureSqliteDataset } from './lib/sqlite-dataset.mjs'
import { ensureWrk } from './lib/wrk.mjs'

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
    const { label, server, stop } = await startOnScratchCopy(files, 'key-cache-memory', dist)
    try {
      const atReady = rssMb(server.pid)
      const row = await fillKeyCache(server, files, label)
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
      await stop()
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
