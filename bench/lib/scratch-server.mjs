/**
 * What the memory and flush scripts start from: the service on a private copy of the dataset
 * (scratch-database.mjs), pinned as the benchmark pins it, then every key requested once so the
 * key cache holds them all (the benchmark's key-cache fill).
 */
import { SERVER_CPU } from './pinning.mjs'
import { keyCacheFill } from './scenarios.mjs'
import { removeScratch, scratchCopy, serverScript } from './scratch-database.mjs'
import { serviceEnv, startServer } from './server-process.mjs'
import { runWrk } from './wrk.mjs'

/** The server of build `dist` (this run's by default) on a scratch copy named `name`; `stop` removes the copy. */
export async function startOnScratchCopy(files, name, dist) {
  const label = dist ?? 'dist'
  const database = scratchCopy(files.database, name)
  const server = await startServer({
    label,
    env: serviceEnv({ DATABASE_URL: `sqlite:${database}` }),
    cpu: SERVER_CPU,
    script: serverScript(dist),
  })
  return {
    label,
    server,
    async stop() {
      await server.stop()
      removeScratch(database)
    },
  }
}

/** One request per key of the dataset; wrk's result row. */
export async function fillKeyCache(server, files, label) {
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
  return row
}
