/**
 * `curriculum lti key rotate`: a new tool key (cases/lti-tool-key.ts); the old one stays published
 * for 7 days, and running servers sign with the new one within a minute.
 */
import type { Command } from 'commander'
import { systemClock } from '../../../clock.js'
import type { Audit } from '../../audit.js'
import { act } from '../../command-action.js'
import { defineCommand } from '../../options.js'
import type { CommandResult } from '../../output.js'

export function defineLtiKeyRotate(key: Command): void {
  defineCommand(
    key,
    'rotate',
    'Rotate the LTI tool key: a new key signs from now on, the old one stays published for 7 days',
    ['curriculum lti key rotate', 'curriculum lti key rotate --json'],
    { audit: 'lti.key.rotate' },
  ).action(act(rotate))
}

async function rotate(_command: Command, audit: Audit): Promise<CommandResult> {
  const rotated = await audit.change(async ({ db }) => {
    const { rotateToolKey } = await import('../../../cases/lti-tool-key.js')
    // The command's own audit row is the one written: the case is given no operator to write another.
    const value = await rotateToolKey(db, undefined, systemClock)
    return { value, target: 'lti-tool-key', changed: { ...value } }
  })
  return {
    data: { key: rotated },
    text: [
      `the tool key ${rotated.current} signs from now on (running servers within a minute)`,
      `${rotated.retired} stays published for 7 days`,
    ],
  }
}
