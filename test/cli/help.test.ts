/**
 * Every command documents itself and answers --json even when its command line is wrong. The
 * list of commands comes from the program itself, so a new command is covered without
 * touching this file.
 */
import type { Command } from 'commander'
import { describe, expect, it } from 'vitest'
import { doesWork } from '../../src/cli/options.js'
import { buildProgram } from '../../src/cli/program.js'
import { cli, jsonOf, newDatabaseUrl, useCliHarness } from './cli-harness.js'

interface Listed {
  path: string[]
  command: Command
}

function listCommands(command: Command, prefix: string[] = []): Listed[] {
  return command.commands.flatMap((sub) => [
    { path: [...prefix, sub.name()], command: sub },
    ...listCommands(sub, [...prefix, sub.name()]),
  ])
}

const all = listCommands(buildProgram({ json: false }))
const leaves = all.filter(({ command }) => doesWork(command))

/** Each spawns a Node process per command, two at a time: minutes, not seconds, on a loaded machine. */
const SPAWNING = 180_000

/** Runs the jobs two at a time: each is a Node process, and the test machine may have two cores. */
async function inPairs<T, R>(items: readonly T[], job: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = []
  for (let i = 0; i < items.length; i += 2) results.push(...(await Promise.all(items.slice(i, i + 2).map(job))))
  return results
}

useCliHarness()

describe('curriculum --help', () => {
  it('covers the commands the brief asks for', () => {
    expect(leaves.map(({ path }) => path.join(' ')).sort()).toEqual(
      [
        'agreement certificate',
        'agreement dispose',
        'agreement end',
        'agreement ended',
        'agreement list',
        'agreement record',
        'backup',
        'catalog case-import',
        'catalog import',
        'catalog validate',
        'disclosures',
        'disclosures export',
        'disclosures report',
        'key create',
        'key list',
        'key revoke',
        'key roll',
        'links add',
        'links import',
        'links remove',
        'links shares',
        'lti demo-platform',
        'lti key rotate',
        'lti registrations',
        'mail test',
        'migrate',
        'operator create',
        'operator list',
        'operator reset-2fa',
        'org create',
        'org list',
        'org reinstate',
        'org suspend',
        'progress import',
        'restore',
        'schools add',
        'schools list',
        'schools members import',
        'roster import',
        'students erase',
        'students import',
      ].sort(),
    )
  })

  it(
    'exits 0 for every command and lists its options and an example',
    async () => {
      const databaseUrl = newDatabaseUrl()
      const results = await inPairs(
        [{ path: [] as string[], command: buildProgram({ json: false }) }, ...all],
        async ({ path, command }) => ({
          path,
          command,
          result: await cli([...path, '--help'], { databaseUrl }),
        }),
      )
      for (const { path, command, result } of results) {
        const name = ['curriculum', ...path].join(' ')
        expect(result.status, name).toBe(0)
        expect(result.stdout, name).toContain(`Usage: ${name}`)
        // Commander wraps long descriptions to the terminal width.
        expect(result.stdout.replace(/\s+/g, ' '), name).toContain(command.description())
        expect(result.stdout, name).toMatch(/Examples?:\n {2}\$ .*curriculum/)
        for (const option of command.options) expect(result.stdout, `${name} ${option.long}`).toContain(option.long!)
      }
    },
    SPAWNING,
  )
})

describe('usage errors', () => {
  it(
    'answer one JSON document and exit 2 for every command given --json',
    async () => {
      const databaseUrl = newDatabaseUrl()
      const results = await inPairs(leaves, async ({ path }) => ({
        path,
        result: await cli([...path, '--no-such-option', '--json'], { databaseUrl }),
      }))
      for (const { path, result } of results) {
        expect(result.status, path.join(' ')).toBe(2)
        const document = jsonOf(result)
        expect(document.ok).toBe(false)
        // Commander checks required options before unknown ones.
        expect(document.error.message).toMatch(/unknown option '--no-such-option'|required option/)
        expect(document.error.problems).toEqual([])
      }
    },
    SPAWNING,
  )

  it('print a message on stderr, nothing on stdout, without --json', async () => {
    const result = await cli(['org', 'create'], { databaseUrl: newDatabaseUrl() })
    expect(result.status).toBe(2)
    expect(result.stdout).toBe('')
    expect(result.stderr).toMatch(/required option '--name <name>' not specified/)
  })

  it('reject a malformed option value before touching anything', async () => {
    const databaseUrl = newDatabaseUrl()
    const [date, scopes, group] = await Promise.all([
      cli(
        ['agreement', 'record', '--org', 'x', '--signed', '2026-02-30', '--document', 'd', '--purpose', 'p', '--json'],
        {
          databaseUrl,
        },
      ),
      cli(['key', 'create', '--org', 'x', '--name', 'n', '--scopes', 'students:read,students:delete', '--json'], {
        databaseUrl,
      }),
      cli(['org', '--json'], { databaseUrl }),
    ])
    expect(date.status).toBe(2)
    expect(jsonOf(date).error.message).toMatch(/--signed <date>.*2026-02-30.*is invalid/)
    expect(scopes.status).toBe(2)
    expect(jsonOf(scopes).error.message).toMatch(/unknown scope "students:delete"/)
    expect(group.status).toBe(2)
    expect(jsonOf(group).error.message).toMatch(/subcommand is required/)
  })
})
