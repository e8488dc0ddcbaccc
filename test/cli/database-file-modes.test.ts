/**
 * A SQLite database the operator's commands create is readable and writable by its owner alone,
 * under the umask most systems give (0022, which leaves new files 0644), and the `-wal` and
 * `-shm` of whoever opens it next follow its mode.
 */
import fs from 'node:fs'
import path from 'node:path'
import SQLite from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import { type CliResult, startCli, tempDir, useCliHarness } from './cli-harness.js'

useCliHarness()

const mode = (file: string) => fs.statSync(file).mode & 0o777

/** Runs the CLI with a umask of 0022, which its child inherits when it is spawned. */
function cliWithUsualUmask(args: string[], databaseUrl: string): Promise<CliResult> {
  const previous = process.umask(0o022)
  try {
    return startCli(args, { databaseUrl }).exited
  } finally {
    process.umask(previous)
  }
}

describe('a database the CLI creates', () => {
  it('is 0600 from the start, and its -wal and -shm follow', async () => {
    const file = path.join(tempDir(), 'new.db')
    const result = await cliWithUsualUmask(['migrate'], `sqlite:${file}`)
    expect(result.status, result.stderr).toBe(0)
    expect(mode(file)).toBe(0o600)

    // The next process to open it (this one, under the same umask) gets a -wal and -shm of 0600.
    const previous = process.umask(0o022)
    const database = new SQLite(file, { fileMustExist: true })
    try {
      database.prepare('select count(*) from audit_log').get()
      expect(mode(`${file}-wal`)).toBe(0o600)
      expect(mode(`${file}-shm`)).toBe(0o600)
    } finally {
      database.close()
      process.umask(previous)
    }
  })
})
