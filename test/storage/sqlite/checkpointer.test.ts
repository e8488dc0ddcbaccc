/**
 * WAL checkpoints off the event loop: with automatic checkpoints off, the worker thread moves
 * committed pages into the database file while the writer goes on, and starts the WAL again past
 * a bound.
 */
import fs from 'node:fs'
import path from 'node:path'
import SQLite from 'better-sqlite3'
import { describe, expect, it, vi } from 'vitest'
import { sql } from 'kysely'
import { openStorage } from '../../../src/storage/connection.js'
import { restartsAfter, startCheckpointer } from '../../../src/storage/sqlite/checkpointer.js'
import { tempDir } from '../../helper.js'
import { waitFor } from '../../support/wait-for.js'

async function until(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** A WAL database with automatic checkpoints off (as the server runs it), and a writer of 1 KB rows. */
function walDatabase(name: string) {
  const file = path.join(tempDir(), name)
  const db = new SQLite(file)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  db.pragma('wal_autocheckpoint = 0')
  db.exec('create table rows (id integer primary key, body text not null)')
  const insert = db.prepare('insert into rows (body) values (?)')
  const body = 'x'.repeat(1000)
  const writeMany = db.transaction((count: number) => {
    for (let i = 0; i < count; i++) insert.run(body)
  })
  return { file, db, writeMany }
}

describe.skipIf(process.env.TEST_DATABASE_URL !== undefined)('SQLite checkpointer', () => {
  it('checkpoints the WAL on its own thread', async () => {
    const { file, db, writeMany } = walDatabase('checkpoint.db')
    writeMany(2000)
    const wal = `${file}-wal`
    const walBefore = fs.statSync(wal).size
    expect(walBefore).toBeGreaterThan(1_000_000)

    const before = fs.statSync(file).size
    const checkpointer = startCheckpointer({ file, intervalMs: 20, restartAboveBytes: 1_000_000 })
    try {
      // Pages moved into the database file.
      await until(() => fs.statSync(file).size > before + 2_000_000)
      writeMany(10)
      expect((db.prepare('select count(*) as n from rows').get() as { n: number }).n).toBe(2010)
    } finally {
      await checkpointer.stop()
      db.close()
    }
  })

  it('starts the WAL again past the bound while the writer goes on', async () => {
    const { file, db, writeMany } = walDatabase('restart.db')
    const checkpointer = startCheckpointer({ file, intervalMs: 50, restartAboveBytes: 1_000_000 })
    try {
      // About 30 MB of frames in small transactions, the lock free for a millisecond between them
      // (as between group commits). A PASSIVE checkpoint never catches up with them, so without
      // the RESTART the WAL would hold them all (33 MB when restart() returns at once).
      let largest = 0
      for (let i = 0; i < 1600; i++) {
        writeMany(10)
        largest = Math.max(largest, fs.statSync(`${file}-wal`).size)
        await new Promise((resolve) => setTimeout(resolve, 1))
      }
      expect(largest).toBeLessThan(8_000_000)
      expect((db.prepare('select count(*) as n from rows').get() as { n: number }).n).toBe(16_000)
    } finally {
      await checkpointer.stop()
      db.close()
    }
  })

  it('starts the WAL again only past the bound', () => {
    expect(restartsAfter(100, 4096, 1_000_000)).toBe(false)
    expect(restartsAfter(244, 4096, 1_000_000)).toBe(false)
    expect(restartsAfter(245, 4096, 1_000_000)).toBe(true)
    expect(restartsAfter(20_000, 4096, 64 * 1024 * 1024)).toBe(true)
    expect(restartsAfter(16_384, 4096, 64 * 1024 * 1024)).toBe(false)
  })

  it('stops promptly and lets the process exit', async () => {
    const file = path.join(tempDir(), 'stop.db')
    const db = new SQLite(file)
    db.pragma('journal_mode = WAL')
    const checkpointer = startCheckpointer({ file, intervalMs: 10 })
    const started = Date.now()
    await checkpointer.stop()
    // Promptly: far sooner than a hung worker thread, with room for a loaded machine (1.06 s seen).
    expect(Date.now() - started).toBeLessThan(5000)
    db.close()
  })

  it('starts the checkpoint thread only once the WAL has grown past its start size', async () => {
    const file = path.join(tempDir(), 'lazy.db')
    // The watcher looks at the WAL's size with fs.statSync: count its looks.
    let looks = 0
    const statSync = fs.statSync
    const watched = vi.spyOn(fs, 'statSync').mockImplementation(((...args: Parameters<typeof statSync>) => {
      if (args[0] === `${file}-wal`) looks++
      return statSync(...args)
    }) as typeof statSync)
    const storage = openStorage(`sqlite:${file}`, {
      backgroundCheckpoints: true,
      checkpointerStartBytes: 512 * 1024,
      checkpointerWatchMs: 20,
    })
    // One statement writes any number of rows (a recursive common table expression).
    const write = (rows: number) =>
      sql`with recursive r(i) as (select 1 union all select i + 1 from r where i < ${rows})
        insert into bulk (body) select ${'x'.repeat(1000)} from r`.execute(storage.db)
    try {
      await sql`create table bulk (id integer primary key, body text not null)`.execute(storage.db)
      const fileSize = () => fs.statSync(file).size
      const before = fileSize()
      await write(100)
      // Well under the start size: nothing checkpoints, so nothing reaches the database file,
      // for 60 looks at the WAL (at 20 ms apart, past the 1 s after which the thread used to
      // start whatever was written). The looks are counted, not timed: a loaded machine makes
      // them late, not fewer. They stop once the thread starts, so a thread started early fails
      // the wait too.
      looks = 0
      await waitFor(() => looks >= 60, { what: '60 looks at the WAL' })
      expect(fileSize()).toBe(before)
      await write(1000)
      // Past it: the thread starts and moves the committed pages into the file.
      await until(() => fileSize() > before + 1_000_000)
    } finally {
      watched.mockRestore()
      await storage.close()
    }
  })
})
