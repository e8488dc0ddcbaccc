/**
 * What every command shares: a one-line description, --json, and examples under --help; and
 * the parsers that turn option text into values, so a malformed option is a usage error
 * (exit 2) reported before anything is opened.
 */
import { type Command, InvalidArgumentError } from 'commander'
import { parseScopes, type Scope } from '../domain/scopes.js'
import { markAudited } from './audit.js'
import { parseDateOrTimestamp } from './dates.js'

import { UUID } from '../domain/uuid.js'

/** Commands that do work themselves; a group only holds others (`disclosures` does both). */
const working = new WeakSet<Command>()

/** Whether `command` does work of its own, for tests that go through every command. */
export function doesWork(command: Command): boolean {
  return working.has(command)
}

/**
 * Adds a command that does work (as opposed to a group of commands) under `parent`. A command
 * that changes anything names its `audit` action: it then takes --actor, and `act` gives it the
 * Audit that writes its row (audit.ts).
 */
export function defineCommand(
  parent: Command,
  nameAndArgs: string,
  description: string,
  examples: readonly string[],
  options: { audit?: string } = {},
): Command {
  const command = parent
    .command(nameAndArgs)
    .description(description)
    .option('--json', 'print one JSON document on stdout instead of text')
    .addHelpText(
      'after',
      `\n${examples.length === 1 ? 'Example' : 'Examples'}:\n${examples.map((line) => `  $ ${line}`).join('\n')}\n`,
    )
  if (options.audit !== undefined) markAudited(command, options.audit)
  working.add(command)
  return command
}

/**
 * Adds a group such as `org`; running it without a subcommand prints its help and exits 2. It
 * accepts --json too, so that even that mistake answers in JSON when asked.
 */
export function defineGroup(parent: Command, name: string, description: string, example: string): Command {
  return parent
    .command(name)
    .description(description)
    .option('--json', 'print one JSON document on stdout instead of text')
    .addHelpText('after', `\nExample:\n  $ ${example}\n`)
}

export function dateOption(text: string): number {
  const value = parseDateOrTimestamp(text)
  if (value === null)
    throw new InvalidArgumentError(
      'use a date such as 2026-01-31 (midnight UTC) or a timestamp such as 2026-01-31T09:00:00Z.',
    )
  return value
}

export function scopesOption(text: string): Scope[] {
  try {
    return parseScopes(text)
  } catch (error) {
    throw new InvalidArgumentError(`${(error as Error).message}.`)
  }
}

export function uuidOption(text: string): string {
  if (!UUID.test(text)) throw new InvalidArgumentError('expected a UUID such as 11111111-1111-4111-8111-111111111111.')
  return text.toLowerCase()
}

/** A page cursor: the `next` a previous listing printed. */
export function cursorOption(text: string): number {
  const value = Number(text)
  if (!/^\d{1,15}$/.test(text) || value < 1)
    throw new InvalidArgumentError('expected the "next" number a previous listing printed.')
  return value
}

export function limitOption(text: string): number {
  const value = Number(text)
  if (!/^\d+$/.test(text) || value < 1 || value > 100_000)
    throw new InvalidArgumentError('expected a whole number from 1 to 100000.')
  return value
}

/** `--org` on a listing: narrows it to one organisation. */
export const ORG_FILTER = ['--org <organisation>', 'only this organisation (id or exact name)'] as const

/** `--org` on a command that acts on one organisation. */
export const ORG_NAMED = ['--org <organisation>', 'organisation id or exact name'] as const
