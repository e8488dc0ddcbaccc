/**
 * WAL checkpoints for the server's SQLite database, on a thread of their own.
 *
 * By default SQLite checkpoints inside the commit that takes the WAL past 1,000 pages: that
 * commit copies the pages into the database file and waits for two fsyncs, and better-sqlite3
 * does it on the event loop, so every request in flight waits too (tens of ms on this kind of
 * disk, several times a second under write load). With automatic checkpoints off, a worker
 * thread with its own connection runs PASSIVE checkpoints, which never block readers or the
 * writer. WAL mode allows a checkpoint beside a writer, so nothing changes for durability.
 *
 * A PASSIVE checkpoint cannot restart the WAL while writes keep arriving, so past
 * `truncateAboveBytes` the worker follows it with a TRUNCATE checkpoint, which holds off the
 * writer while it copies what arrived since the PASSIVE one (little) and empties the file.
 */
import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'

export interface CheckpointerOptions {
  file: string
  intervalMs?: number
  truncateAboveBytes?: number
}

// Plain CommonJS, evaluated in the worker: no build step or loader needed for a second file.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
const fs = require('node:fs')
const SQLite = require(workerData.driver)
const db = new SQLite(workerData.file)
// Short: a TRUNCATE checkpoint holds the write lock while it waits for readers, and the
// server's writes wait behind it (answered later, or 503 after 2 s). With 1,000 ms a million-row
// import (which pushes the WAL past the threshold again and again) cost about 0.3 % of
// concurrent student requests a 503, when writers still gave up after 250 ms.
db.pragma('busy_timeout = 50')
const wal = workerData.file + '-wal'
const timer = setInterval(() => {
  try {
    let size = 0
    try { size = fs.statSync(wal).size } catch {}
    if (size === 0) return
    db.pragma('wal_checkpoint(PASSIVE)')
    // Right after a PASSIVE one, little is left to copy, so the writer waits only briefly.
    if (size > workerData.truncateAboveBytes) db.pragma('wal_checkpoint(TRUNCATE)')
  } catch {
    // Busy or briefly unavailable: the next tick tries again.
  }
}, workerData.intervalMs)
parentPort.on('message', () => {
  clearInterval(timer)
  db.close()
  parentPort.close()
})
`

export interface Checkpointer {
  stop(): Promise<void>
}

export function startCheckpointer(options: CheckpointerOptions): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3')
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: {
      driver,
      file: options.file,
      intervalMs: options.intervalMs ?? 200,
      truncateAboveBytes: options.truncateAboveBytes ?? 16 * 1024 * 1024,
    },
  })
  worker.unref()
  // A failure here costs only a larger WAL; the database stays correct.
  worker.on('error', () => {})
  return {
    async stop() {
      const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()))
      worker.postMessage('stop')
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 1000).unref())])
      await worker.terminate()
    },
  }
}
