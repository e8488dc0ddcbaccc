/**
 * WAL checkpoints for the server's SQLite database, on a thread of their own.
 *
 * By default SQLite checkpoints inside the commit that takes the WAL past 1,000 pages: that
 * commit copies the pages into the database file and waits for two fsyncs, and better-sqlite3
 * does it on the event loop, so every request in flight waits too, again and again under write
 * load. With automatic checkpoints off, a worker thread with its own connection runs PASSIVE
 * checkpoints, which never block readers or the writer. WAL mode allows a checkpoint beside a
 * writer, so nothing changes for durability.
 *
 * The WAL starts again from its beginning when the writer begins a transaction with every
 * frame already copied. Under steady writes that moment never comes (frames arrive while a
 * checkpoint copies), so the WAL would grow without end; readers do not slow down with it, as
 * they look only at frames after the last checkpoint. So past `restartAboveBytes` of frames the
 * worker follows the PASSIVE checkpoint with a RESTART one, which holds off the writer while it
 * copies what arrived since and syncs the WAL and the database file. The bound sets how often
 * that happens, and so how often the writer is held off; it is a RESTART rather than a
 * TRUNCATE, which would also free the file's blocks and hold the writer longer. The file keeps
 * its largest size (it is reused from the start), which stays near the bound.
 *
 * What the writer waits for is those two syncs, so the worker does the slow part of them first,
 * outside the lock (`restart`). A PASSIVE checkpoint syncs the database file only when it copies
 * the WAL to its very end, which never happens under steady writes: the RESTART's sync would
 * flush every page copied since the last restart, and the WAL's sync every frame since the last
 * tick. So both files are synced beforehand, and the busy handler's sleeps (1, 2, 5, 10 ms,
 * taken while holding the write lock when a reader is in the way) are replaced by short
 * retries, which keeps the writer's wait for a RESTART short (figures: docs/performance.md).
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
// Short: while a RESTART has the write lock, the server's writes wait behind it (answered later,
// or 503 after 2 s), and an import pushes the WAL past the bound again and again, so a long wait
// turned student requests into 503s (figures: docs/performance.md). A RESTART is tried for about
// as long as this (see restart()).
const BUSY_TIMEOUT_MS = 50
db.pragma('busy_timeout = ' + BUSY_TIMEOUT_MS)
const wal = workerData.file + '-wal'
const pageSize = db.pragma('page_size', { simple: true })
// The rule's own source, so the test of restartsAfter tests what runs here (a worker that cannot
// start fails the checkpointer test, which waits for pages to reach the database file).
const restartsAfter = ${restartsAfter.toString()}
const RESTART_PAUSE_MS = 0.2
const RESTART_TRIES = BUSY_TIMEOUT_MS / RESTART_PAUSE_MS
const pause = new Int32Array(new SharedArrayBuffer(4))

function syncFile(file) {
  const fd = fs.openSync(file, 'r')
  try { fs.fdatasyncSync(fd) } finally { fs.closeSync(fd) }
}

/**
 * The WAL starts again from its beginning, the writer held off as briefly as can be (see the
 * module's comment): the frames written since the last PASSIVE checkpoint synced and copied,
 * both files synced, all before the lock. Then the RESTART, without a busy handler: a try that
 * finds the writer or a reader in the way gives up at once (the handler's sleeps of 1, 2, 5 and
 * 10 ms were taken holding the write lock when a reader was in the way) and is made again
 * RESTART_PAUSE_MS later, for about BUSY_TIMEOUT_MS.
 */
function restart() {
  syncFile(wal)
  db.pragma('wal_checkpoint(PASSIVE)')
  syncFile(wal)
  syncFile(workerData.file)
  db.pragma('busy_timeout = 0')
  try {
    for (let tries = 0; tries < RESTART_TRIES; tries++) {
      if (db.pragma('wal_checkpoint(RESTART)')[0].busy === 0) return
      Atomics.wait(pause, 0, 0, RESTART_PAUSE_MS)
    }
  } finally {
    db.pragma('busy_timeout = ' + BUSY_TIMEOUT_MS)
  }
}

const timer = setInterval(() => {
  try {
    let size = 0
    try { size = fs.statSync(wal).size } catch {}
    if (size === 0) return
    const [{ log: frames }] = db.pragma('wal_checkpoint(PASSIVE)')
    if (restartsAfter(frames, pageSize, workerData.restartAboveBytes)) restart()
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
