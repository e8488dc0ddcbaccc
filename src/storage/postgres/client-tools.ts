/**
 * PostgreSQL's client tools as the dump checks run them: pg_dump and pg_restore from the PATH, the
 * password in PGPASSWORD rather than on a command line anyone can list, and the rows of one
 * table read out of a dump.
 */
import { execFile } from 'node:child_process'
import { DumpArchiveError } from './dump-archive.js'

/** Runs `tool`; rejects with what it said when it fails, or with how to install it when it is missing. */
export function runTool(tool: string, args: string[], password: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      tool,
      args,
      {
        encoding: 'utf8',
        maxBuffer: 64 << 20,
        env: { ...process.env, ...(password === '' ? {} : { PGPASSWORD: password }) },
      },
      (error, stdout, stderr) => {
        if ((error as NodeJS.ErrnoException | null)?.code === 'ENOENT')
          reject(new DumpArchiveError(`${tool} is needed to check a dump and is not on the PATH (postgresql-client)`))
        else if (error !== null) reject(new DumpArchiveError(`${tool} failed: ${stderr.trim() || error.message}`))
        else resolve(stdout)
      },
    )
  })
}

/** The connection as libpq takes it: without the password (given in PGPASSWORD) or the service's schema. */
export function libpqUrl(databaseUrl: string): { dbname: string; password: string } {
  const url = new URL(databaseUrl)
  const password = decodeURIComponent(url.password)
  url.password = ''
  url.searchParams.delete('schema')
  return { dbname: url.toString(), password }
}

/**
 * The rows of `schema.table` in the dump `file`, split into fields, as pg_restore prints them
 * after the table's COPY statement `copy`. The caller has checked that the dump's COPY statement
 * is exactly `copy`, so what follows it up to the end marker is rows and nothing else.
 */
export async function dumpedRows(file: string, schema: string, table: string, copy: string): Promise<string[][]> {
  const output = await runTool(
    'pg_restore',
    ['--data-only', `--schema=${schema}`, `--table=${table}`, '--file=-', file],
    '',
  )
  const lines = output.split('\n')
  const start = lines.indexOf(copy.trimEnd())
  const end = lines.indexOf('\\.', start)
  if (start < 0 || end < 0) throw new DumpArchiveError(`the rows of its ${table} table cannot be read`)
  return lines.slice(start + 1, end).map((row) => row.split('\t'))
}
