/**
 * Every command that ends a partner's access or erases students asks first, the same way
 * (src/cli/confirm.ts). The commands that ask come from the program itself, so one that stops
 * asking, or a new one that asks, fails here until the list says so. What each asks is tested
 * with the command.
 */
import type { Command } from 'commander'
import { describe, expect, it } from 'vitest'
import { asksFirst } from '../../src/cli/confirm.js'
import { doesWork } from '../../src/cli/options.js'
import { buildProgram } from '../../src/cli/program.js'

function leaves(command: Command, prefix: string[] = []): { path: string; command: Command }[] {
  return command.commands.flatMap((sub) => [
    ...(doesWork(sub) ? [{ path: [...prefix, sub.name()].join(' '), command: sub }] : []),
    ...leaves(sub, [...prefix, sub.name()]),
  ])
}

describe('the commands that end access', () => {
  it('are exactly these, and each takes --yes and --dry-run', () => {
    const asking = leaves(buildProgram({ json: false })).filter(({ command }) => asksFirst(command))
    expect(asking.map(({ path }) => path).sort()).toEqual([
      'agreement dispose',
      'agreement end',
      'links remove',
      'org suspend',
      'roster import',
      'schools members import',
      'students erase',
    ])
    for (const { path, command } of asking)
      expect(
        command.options.map((option) => option.long).filter((long) => long === '--yes' || long === '--dry-run'),
        path,
      ).toEqual(['--yes', '--dry-run'])
  })
})
