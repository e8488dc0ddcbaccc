/**
 * The one place a command's outcome becomes output and an exit code, so every command answers
 * --json the same way and no error escapes as a stack trace.
 */
import type { Command } from 'commander'
import { ConfigError } from '../config.js'
import { type Audit, auditFor } from './audit.js'
import { CliError, type CommandResult, reportFailure, writeJson, writeText } from './output.js'

/** Reports an error and sets the exit code: the error's own for a CliError, otherwise 1. */
export async function reportError(json: boolean, error: unknown): Promise<void> {
  if (error instanceof CliError) {
    reportFailure(json, error.message, error.problems, error.details)
    process.exitCode = error.exitCode
    return
  }
  process.exitCode = 1
  const message = error instanceof Error ? error.message : String(error)
  // Any other error comes from code that has run, so these imports cost nothing more.
  const [{ ConflictError, NotFoundError }, { isStorageUnavailable }] = await Promise.all([
    import('../domain/errors.js'),
    import('../storage/connection.js'),
  ])
  if (error instanceof NotFoundError || error instanceof ConflictError || error instanceof ConfigError) {
    reportFailure(json, message)
  } else if (isStorageUnavailable(error)) {
    // A locked or unreachable database: worth retrying, and not a bug.
    reportFailure(json, `the database is unavailable, nothing was changed; try again: ${message}`)
  } else {
    reportFailure(json, `unexpected failure: ${message}`)
    if (process.env.CURRICULUM_DEBUG && error instanceof Error) process.stderr.write(`${error.stack}\n`)
  }
}

/**
 * Adapts `work` to commander's action signature (arguments..., options, command) and prints
 * what it returns: `{"ok":true,...data}` with --json, the text otherwise. A changing command
 * makes its change through `audit`, which writes its audit row (audit.ts).
 */
export function act(
  work: (command: Command, audit: Audit) => Promise<CommandResult>,
): (...args: unknown[]) => Promise<void> {
  return async (...args: unknown[]) => {
    const command = args[args.length - 1] as Command
    const json = command.optsWithGlobals().json === true
    try {
      const result = await work(command, auditFor(command))
      if (json) writeJson({ ok: true, ...result.data })
      else writeText(result.text)
    } catch (error) {
      await reportError(json, error)
    }
  }
}
