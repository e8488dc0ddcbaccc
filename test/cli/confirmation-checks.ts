/**
 * The checks every command that ends access or erases passes (src/cli/confirm.ts): without a
 * terminal and without --yes it shows what it would end and writes nothing; --dry-run writes
 * nothing even with --yes; on a real terminal "n" writes nothing and "y" writes, and --json
 * never asks; --yes writes.
 */
import { expect } from 'vitest'
import { PROMPT } from '../../src/cli/confirm.js'
import { cli, jsonOf } from './cli-harness.js'
import { answerOnTerminal } from './cli-terminal.js'

export interface ConfirmationCase {
  /** The command line, without --yes, --dry-run or --json. */
  argv: readonly string[]
  /** A new database in which `argv` ends something; its URL. */
  arrange(): Promise<string>
  /** What the command changes, read from the database. */
  state(databaseUrl: string): Promise<unknown>
  /** What the text preview shows. */
  preview: RegExp
  /** Exit status without confirmation: 3, or 0 for a command whose form without --yes is its preview. */
  unconfirmed?: number
  cwd?: string
}

export async function expectConfirmation(c: ConfirmationCase): Promise<void> {
  const unconfirmed = c.unconfirmed ?? 3
  const databaseUrl = await c.arrange()
  const options = { databaseUrl, ...(c.cwd === undefined ? {} : { cwd: c.cwd }) }
  const before = await c.state(databaseUrl)

  const text = await cli(c.argv, options)
  expect(text.status, text.stdout + text.stderr).toBe(unconfirmed)
  expect(text.stdout).toMatch(c.preview)
  expect(text.stdout + text.stderr).toMatch(/nothing was written: to .*, run it again with --yes/)
  expect(await c.state(databaseUrl)).toEqual(before)

  const json = await cli([...c.argv, '--json'], options)
  expect(json.status, json.stdout + json.stderr).toBe(unconfirmed)
  const document = jsonOf(json)
  expect(unconfirmed === 0 ? document : document.error).toMatchObject({ preview: expect.any(Object), written: false })
  expect(await c.state(databaseUrl)).toEqual(before)

  // --json is for scripts: it never asks, even on a terminal. The terminal also shows stderr's
  // progress line, which the document follows.
  const jsonOnTerminal = await answerOnTerminal([...c.argv, '--json'], options)
  expect(jsonOnTerminal.status, jsonOnTerminal.stdout).toBe(unconfirmed)
  expect(jsonOnTerminal.stdout).not.toContain(PROMPT)
  const printed = jsonOnTerminal.stdout.slice(jsonOnTerminal.stdout.indexOf('{"ok"'))
  expect(JSON.parse(printed)).toMatchObject({ ok: unconfirmed === 0 })
  expect(await c.state(databaseUrl)).toEqual(before)

  const dry = await cli([...c.argv, '--dry-run', '--yes', '--json'], options)
  expect(dry.status, dry.stdout + dry.stderr).toBe(0)
  expect(jsonOf(dry)).toMatchObject({ ok: true, dryRun: true, preview: expect.any(Object) })
  expect(await c.state(databaseUrl)).toEqual(before)

  const no = await answerOnTerminal(c.argv, options, PROMPT, 'n')
  expect(no.status, no.stdout).toBe(unconfirmed)
  expect(no.stdout).toMatch(c.preview)
  expect(no.stdout).toContain('not confirmed: nothing was written')
  expect(await c.state(databaseUrl)).toEqual(before)

  const yes = await answerOnTerminal(c.argv, options, PROMPT, 'y')
  expect(yes.status, yes.stdout).toBe(0)
  expect(await c.state(databaseUrl)).not.toEqual(before)

  const scripted = await c.arrange()
  const beforeScripted = await c.state(scripted)
  const confirmed = await cli([...c.argv, '--yes', '--json'], { ...options, databaseUrl: scripted })
  expect(confirmed.status, confirmed.stdout + confirmed.stderr).toBe(0)
  expect(jsonOf(confirmed).ok).toBe(true)
  expect(await c.state(scripted)).not.toEqual(beforeScripted)
}
