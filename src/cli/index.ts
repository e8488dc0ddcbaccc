#!/usr/bin/env node
/**
 * The `curriculum` operator command. Exit codes: 0 done, 1 failed, 2 wrong command line, 3 not
 * confirmed (a change that ends access, refused or asked without a terminal: confirm.ts).
 */
import { CommanderError } from 'commander'
import { reportError } from './command-action.js'
import { UsageError } from './output.js'
import { buildProgram } from './program.js'

/** Commander's codes for help and version, which are answers, not errors. */
const INFORMATIONAL = new Set(['commander.helpDisplayed', 'commander.version'])

async function main(argv: readonly string[]): Promise<void> {
  // Known before parsing, so that even a malformed command line answers in JSON.
  const json = argv.slice(2).includes('--json')
  try {
    await buildProgram({ json }).parseAsync(argv)
  } catch (error) {
    if (error instanceof CommanderError) {
      if (INFORMATIONAL.has(error.code)) {
        process.exitCode = 0
        return
      }
      // Commander has printed the message (or, for a group without a subcommand, its help) to
      // stderr already, except the message when --json was given.
      const message =
        error.code === 'commander.help' ? 'a subcommand is required; see --help' : error.message.replace(/^error: /, '')
      if (json) await reportError(true, new UsageError(message))
      process.exitCode = 2
      return
    }
    await reportError(json, error)
  }
}

await main(process.argv)
