/**
 * The confirmation every command that ends a partner's access or erases students goes through
 * before it writes (`roster import`, `schools members import`, `links remove`, `agreement end`,
 * `org suspend`, `students erase`): one wrong folder or name must not end a district's sharing
 * unseen. The command works out what it would end, read-only, and hands it here:
 *
 * - the preview is always shown (with --json, it is in the document);
 * - `--dry-run` stops there, writing nothing, exit 0;
 * - `--yes`, or a change that ends nothing, writes;
 * - on a terminal (stdin and stdout both, no --json) it asks "Proceed? [y/N]" and writes on y or yes;
 * - otherwise nothing is written: exit 3 (NOT_CONFIRMED), so a script that used to write notices,
 *   except for a command whose form without --yes is its preview (`students erase`), which exits 0.
 *
 * It asks between the read and the write, never inside a transaction: a person thinking must not
 * hold SQLite's write lock.
 */
import type { Command } from 'commander'
import { CliError, type CommandResult, writeText } from './output.js'

/** Exit code of a change that was not confirmed: the preview was shown and nothing was written. */
export const NOT_CONFIRMED = 3

export const PROMPT = 'Proceed? [y/N] '

/** What a command would change, worked out before writing anything. */
export interface PendingChange {
  /** What it would do and end, for people. */
  lines: readonly string[]
  /** The same for --json, beside the command's own fields (`preview: {...}`). */
  data: Record<string, unknown>
  /** Whether it ends a partner's access or erases; a change that does not is written without asking. */
  ends: boolean
  /** What --yes would do, for the message when it is missing: "end the share". */
  action: string
}

/** Either write, or return `result` (a dry run or a preview) instead of writing. */
export type Confirmation = { write: true } | { write: false; result: CommandResult }

interface ConfirmOptions {
  yes?: boolean
  dryRun?: boolean
}

const confirming = new WeakSet<Command>()

/** Whether `command` asks before ending access or erasing, for tests that go through every command. */
export function asksFirst(command: Command): boolean {
  return confirming.has(command)
}

/** Adds --yes and --dry-run to a command that ends access or erases. */
export function withConfirmation(command: Command, yes: string): Command {
  confirming.add(command)
  return command
    .option('--yes', `${yes} without asking (needed when there is no terminal to ask on)`)
    .option('--dry-run', 'show what it would change and end, and write nothing')
}

/**
 * Shows `change` and decides whether `command` writes it (see the module comment). With
 * `previewWithoutYes`, not confirming returns the preview (exit 0) instead of failing with exit 3.
 */
export async function confirmChange(
  command: Command,
  change: PendingChange,
  previewWithoutYes = false,
): Promise<Confirmation> {
  const options = command.opts<ConfirmOptions>()
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
  if (previewWithoutYes) return { write: false, result: { data: { ...change.data, written: false }, text: message } }
  throw new CliError(message, [], NOT_CONFIRMED, { ...change.data, written: false })
}

/** Asks `question` on the terminal; only y or yes is a yes, and Ctrl-C or Ctrl-D a no. */
async function ask(question: string): Promise<boolean> {
  const { createInterface } = await import('node:readline')
  const terminal = createInterface({ input: process.stdin, output: process.stdout })
  try {
    const answer = await new Promise<string>((resolve) => {
      terminal.once('close', () => resolve(''))
      terminal.once('SIGINT', () => {
        process.stdout.write('\n')
        terminal.close()
      })
      terminal.question(question, resolve)
    })
    return /^y(es)?$/i.test(answer.trim())
  } finally {
    terminal.close()
  }
}
