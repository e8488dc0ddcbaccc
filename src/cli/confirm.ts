/**
 * Asking before a command writes a change that ends a partner's access: the command works out
 * what it would do, read-only, and hands it here. The preview is always shown (with --json, it is
 * in the document); `--dry-run` stops there, writing nothing; `--yes` writes; on a terminal (stdin
 * and stdout, no --json) it asks "Proceed? [y/N]"; otherwise nothing is written and the command
 * exits 3, so that a script which forgot --yes notices. It asks between the read and the write,
 * never inside a transaction: a person thinking must not hold SQLite's write lock.
 */
import type { Command } from 'commander'
import { CliError, type CommandResult, writeText } from './output.js'

/** Exit code of a change that was not confirmed: the preview was shown and nothing was written. */
export const NOT_CONFIRMED = 3

export const PROMPT = 'Proceed? [y/N] '

/** What a command would change, worked out before writing anything. */
export interface PendingChange {
  /** What it would do, for people. */
  lines: readonly string[]
  /** The same for --json, beside the command's own fields. */
  data: Record<string, unknown>
  /** Whether it ends access; a change that does not is written without asking. */
  ends: boolean
  /** What --yes would do, for the message when it is missing: "end the links". */
  action: string
}

/** Either write, or return `result` (a dry run) instead of writing. */
export type Confirmation = { write: true } | { write: false; result: CommandResult }

/** Adds --yes and --dry-run to a command that ends access. */
export function withConfirmation(command: Command, yes: string): Command {
  return command
    .option('--yes', `${yes} without asking (needed when there is no terminal to ask on)`)
    .option('--dry-run', 'show what it would change and end, and write nothing')
}

/** Shows `change` and decides whether `command` writes it (see the module comment). */
export async function confirmChange(command: Command, change: PendingChange): Promise<Confirmation> {
  const options = command.opts<{ yes?: boolean; dryRun?: boolean }>()
  const json = command.optsWithGlobals().json === true
  if (options.dryRun === true)
    return {
      write: false,
      result: { data: { ...change.data, dryRun: true }, text: [...change.lines, 'dry run: nothing was written'] },
    }
  if (!json) writeText(change.lines)
  if (!change.ends || options.yes === true) return { write: true }
  const terminal = !json && process.stdin.isTTY === true && process.stdout.isTTY === true
  if (terminal && (await ask(PROMPT))) return { write: true }
  const message = terminal
    ? 'not confirmed: nothing was written'
    : `nothing was written: to ${change.action}, run it again with --yes, or on a terminal to be asked` +
      (json ? ' (--json never asks)' : '')
  throw new CliError(message, [], NOT_CONFIRMED, { ...change.data, written: false })
}

/** Asks `question` on the terminal; only y or yes is a yes, and Ctrl-C or Ctrl-D a no. */
async function ask(question: string): Promise<boolean> {
  const { createInterface } = await import('node:readline')
  const terminal = createInterface({ input: process.stdin, output: process.stdout })
  try {
    const answer = await new Promise<string>((resolve) => {
      terminal.once('close', () => resolve(''))
      // Without a listener readline only pauses on Ctrl-C, and the command would hang.
      terminal.once('SIGINT', () => terminal.close())
      terminal.question(question, resolve)
    })
    return /^y(es)?$/i.test(answer.trim())
  } finally {
    terminal.close()
  }
}
