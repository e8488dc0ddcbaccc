/**
 * The online backup under a writer that never pauses: another process commits row after row into
 * the database, and the backup still completes, quickly, with a copy of one moment. SQLite's
 * backup API starts over whenever another connection writes between two of its steps, so without
 * the snapshot held across the steps (online-backup.ts) it starts over again and again, and under
 * steady writes may never finish.
 */
import { spawn } from 'node:child_process'
import path from 'node:path'
import SQLite from 'better-sqlite3'
import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { recordAudit } from '../../../src/storage/audit-repository.js'
import { backupDatabaseFile } from '../../../src/storage/sqlite/online-backup.js'
import { createTestStorage, tempDir } from '../../helper.js'

const ROOT = path.resolve(import.meta.dirname, '../../..')

/**
 * Commits one row at a time into `file` until killed, and says once it has begun. A turn of the
 * event loop between commits leaves the write lock free for a moment, as the server's group
 * commit does, so the backup's audit row gets in.
 */
const WRITER = `
const SQLite = require('better-sqlite3')
const db = new SQLite(process.argv[1], { timeout: 10000 })
db.pragma('synchronous = NORMAL')
const insert = db.prepare('insert into written (at) values (?)')
insert.run(Date.now())
process.stdout.write('writing\\n')
const write = () => {
  insert.run(Date.now())
  setImmediate(write)
}
write()
`

describe('the online backup while another process writes without pause', () => {
  it('completes within seconds, with a sound copy of one moment', async () => {
    const file = path.join(tempDir(), 'busy.db')
    const storage = await createTestStorage({ url: `sqlite:${file}`, catalog: false })
    await sql`create table written (id integer primary key, at integer not null)`.execute(storage.db)
    // 20 MB: five steps of the backup at least.
    await sql`create table filler (bytes blob)`.execute(storage.db)
    await sql`insert into filler select randomblob(65536) from (with recursive n(i) as
      (select 1 union all select i + 1 from n where i < 320) select i from n)`.execute(storage.db)
    const writer = spawn(process.execPath, ['-e', WRITER, file], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] })
    const copy = path.join(tempDir(), 'copy.db')
    try {
      await new Promise<void>((resolve) => writer.stdout.once('data', () => resolve()))
      const started = Date.now()
      let steps = 0
      let restarts = 0
      let copiedBefore = 0
      const report = await Promise.race([
        backupDatabaseFile(file, copy, {
          overwrite: false,
          onProgress: (copied) => {
            steps++
            // Copied pages going back: the backup API started over.
            if (copied < copiedBefore) restarts++
            copiedBefore = copied
          },
          audit: (db) => recordAudit(db, { actor: 'test', action: 'database.backup', target: 'database' }, Date.now()),
        }),
        new Promise<never>((_, reject) =>
          setTimeout(() => reject(new Error('the backup did not finish in 20 s')), 20_000),
        ),
      ])
      const tookMs = Date.now() - started
      expect(writer.exitCode).toBeNull()
      expect(report.integrity).toBe('ok')
      expect(steps).toBeGreaterThanOrEqual(5)
      expect(restarts).toBe(0)
      expect(steps).toBeLessThanOrEqual(Math.ceil(report.pages / 1024) + 1)
      expect(tookMs).toBeLessThan(20_000)
      const copied = new SQLite(copy, { readonly: true })
      try {
        const rows = copied.prepare('select count(*) as n, max(id) as last from written').get() as {
          n: number
          last: number
        }
        // One moment: every row up to the last one it holds, none missing.
        expect(rows.n).toBe(rows.last)
        expect(rows.n).toBeGreaterThan(0)
      } finally {
        copied.close()
      }
    } finally {
      writer.kill('SIGKILL')
      await storage.close()
    }
  }, 60_000)
})
