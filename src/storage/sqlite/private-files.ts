/**
 * A SQLite database and its `-wal` and `-shm` hold the service's secrets and children's first
 * names, so they are readable and writable by their owner alone from the moment they exist. The
 * database file is created 0600 before SQLite opens it, and SQLite gives the `-wal` and `-shm` it
 * creates the database file's permission bits (whatever the umask: os_unix.c, robust_open), so
 * no umask of the process is needed, and nothing else it writes changes. A database found open
 * to others is left as it is and named at start, since its owner may have meant it.
 */
import fs from 'node:fs'
import { createPrivateFile } from './durable-files.js'

/** Creates `file`, empty and 0600, unless it exists; SQLite opens an empty file as a new database. */
export function createDatabaseFile(file: string): void {
  try {
    createPrivateFile(file)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  }
}

/** The database's files (it, its `-wal`, its `-shm`) that its group or other users can read or write. */
export function filesOpenToOthers(file: string): string[] {
  const open: string[] = []
  for (const name of [file, `${file}-wal`, `${file}-shm`]) {
    let mode: number
    try {
      mode = fs.statSync(name).mode
    } catch {
      continue
    }
    if ((mode & 0o066) !== 0) open.push(name)
  }
  return open
}
