/** Debian's PostgreSQL client programs (pg_dump, pg_restore), for the tests that run them. */
import fs from 'node:fs'
import path from 'node:path'

/** The folder of the newest installed version holding both pg_dump and pg_restore, if any. */
export function postgresBin(): string | undefined {
  const root = '/usr/lib/postgresql'
  if (!fs.existsSync(root)) return undefined
  return fs
    .readdirSync(root)
    .sort((a, b) => Number(b) - Number(a))
    .map((version) => path.join(root, version, 'bin'))
    .find((bin) => fs.existsSync(path.join(bin, 'pg_dump')) && fs.existsSync(path.join(bin, 'pg_restore')))
}
