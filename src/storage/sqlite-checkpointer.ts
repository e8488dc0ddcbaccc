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
 * The WAL starts again from its beginning when the writer begins a transaction with every
 * frame already copied. Under steady writes that moment never comes (frames arrive while a
 * checkpoint copies), so the WAL would grow without end; readers do not slow down with it, as
 * they look only at frames after the last checkpoint. So past `restartAboveBytes` of frames the
 * worker follows the PASSIVE checkpoint with a RESTART one, which holds off the writer while it
 * copies and syncs what arrived since (15-30 ms with two fsyncs on this kind of disk; every write
 * waits meanwhile). The bound sets how often that happens: with 64 MB, about once a second under
 * the heaviest write load measured (enrolls, 50-100 MB of WAL a second). The earlier 16 MB bound
 * with a TRUNCATE (which also frees the file's blocks: 20-60 ms more here) did it every 0.4 s:
 * at half the peak rate a progress read's p99 was 21-26 ms, now 8.5-9.6 ms (three runs); an
 * enroll's was 36-42 ms, now 22-42 ms. The file keeps its largest size (it is reused from the
 * start), which stays near the bound.
 */
import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'

export interface CheckpointerOptions {
  file: string
  intervalMs?: number
  restartAboveBytes?: number
}

/** Whether a WAL holding this many frames is started again (see above); the worker runs its source. */
export function restartsAfter(frames: number, pageSize: number, restartAboveBytes: number): boolean {
  return frames * pageSize > restartAboveBytes
}

// Plain CommonJS, evaluated in the worker: no build step or loader needed for a second file.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
const fs = require('node:fs')
const SQLite = require(workerData.driver)
const db = new SQLite(workerData.file)
// Short: a RESTART checkpoint holds the write lock while it waits for readers, and the
// server's writes wait behind it (answered later, or 503 after 2 s). With 1,000 ms a million-row
// import (which pushes the WAL past the threshold again and again) cost about 0.3 % of
// concurrent student requests a 503, when writers still gave up after 250 ms.
db.pragma('busy_timeout = 50')
const wal = workerData.file + '-wal'
const pageSize = db.pragma('page_size', { simple: true })
// The rule's own source, so the test of restartsAfter tests what runs here (a worker that cannot
// start fails the checkpointer test, which waits for pages to reach the database file).
const restartsAfter = ${restartsAfter.toString()}
const timer = setInterval(() => {
  try {
    let size = 0
    try { size = fs.statSync(wal).size } catch {}
    if (size === 0) return
    const [{ log: frames }] = db.pragma('wal_checkpoint(PASSIVE)')
    // Right after a PASSIVE one, little is left to copy, so the writer waits only briefly.
    if (restartsAfter(frames, pageSize, workerData.restartAboveBytes)) db.pragma('wal_checkpoint(RESTART)')
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
      restartAboveBytes: options.restartAboveBytes ?? 64 * 1024 * 1024,
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
