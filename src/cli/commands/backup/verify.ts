/** `curriculum backup --verify <file>`: whether a backup (a SQLite file or a pg_dump archive) could be restored. */
import path from 'node:path'
import { inspectFile, postgresDatabaseUrl } from '../../database-files.js'
import { CliError, type CommandResult } from '../../output.js'
import { describePostgresDump, isPostgresDump } from '../../postgres-dump-check.js'

/**
 * Checks a backup without opening the configured database (a pg_dump archive: against a scratch
 * schema made there); exits 1 when it could not be restored.
 */
export async function verify(file: string): Promise<CommandResult> {
  if (isPostgresDump(file)) return verifyPostgresDump(file)
  const { report, described } = await inspectFile(path.resolve(file))
  if (described.refusal !== undefined)
    throw new CliError(`${described.refusal}\n${described.text.join('\n')}`, [], 1, described.data)
  return { data: { file: report.file, ...described.data }, text: [`${report.file}: a sound backup`, ...described.text] }
}

/** A pg_dump archive is checked against the migrations' schema, built in DATABASE_URL's PostgreSQL. */
async function verifyPostgresDump(file: string): Promise<CommandResult> {
  const databaseUrl = await postgresDatabaseUrl()
  if (databaseUrl === undefined)
    throw new CliError(
      `${file} is a pg_dump archive: checking it needs DATABASE_URL to name a PostgreSQL database, where the ` +
        "migrations' schema is built for the comparison (in a scratch schema, dropped after)",
    )
  const described = await describePostgresDump(path.resolve(file), databaseUrl)
  if (described.refusal !== undefined)
    throw new CliError(`${described.refusal}\n${described.text.join('\n')}`, [], 1, described.data)
  return { data: described.data, text: [`${path.resolve(file)}: a sound dump`, ...described.text] }
}
