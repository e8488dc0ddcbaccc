/** `curriculum key roll`: a new key replaces one, which keeps working for a chosen overlap (cases/api-keys.ts). */
import { type Command, InvalidArgumentError } from 'commander'
import { systemClock } from '../../../clock.js'
import { rollEnd } from '../../../domain/key-roll.js'
import type { Audit } from '../../audit.js'
import { act } from '../../command-action.js'
import { defineCommand } from '../../options.js'
import type { CommandResult } from '../../output.js'
import { keyJson } from './views.js'

const SHOWN_ONCE =
  'The new key is shown only now and cannot be shown again: only its hash is stored. Keep it in a secret store.'

/** The overlap as the option takes it; checked again against the clock when the roll happens. */
function overlapOption(text: string): string {
  const end = rollEnd(text, systemClock.now())
  if ('refused' in end) throw new InvalidArgumentError(end.refused)
  return text
}

export function defineKeyRoll(key: Command): void {
  defineCommand(
    key,
    'roll <key>',
    'Replace an API key (id or display prefix) with a new one; the old one works until the overlap ends',
    [
      'curriculum key roll cur_live_AbC123 --overlap 24h',
      'curriculum key roll cur_live_AbC123 --overlap now   # a leaked key: it stops at once',
      'curriculum key roll 7c9e6679-7425-40de-944b-e07fc1f90ae7 --overlap 2027-01-31 --json',
    ],
    { audit: 'key.roll' },
  )
    .requiredOption(
      '--overlap <when>',
      'when the old key stops: now (a leaked key), 1h, 24h, 7d, or a date at most 30 days ahead',
      overlapOption,
    )
    .action(act(roll))
}

async function roll(command: Command, audit: Audit): Promise<CommandResult> {
  const [idOrPrefix] = command.processedArgs as [string]
  const { overlap } = command.opts<{ overlap: string }>()
  const rolled = await audit.change(async ({ db }) => {
    const [{ keyNamed }, { rollKey }] = await Promise.all([
      import('../../../storage/access-repository.js'),
      import('../../../cases/api-keys.js'),
    ])
    // Listings show the prefix followed by an ellipsis; accept it pasted back as it is.
    const key = await keyNamed(db, idOrPrefix.replace(/…$/, ''))
    const now = systemClock.now()
    const end = rollEnd(overlap, now)
    if ('refused' in end) throw new InvalidArgumentError(end.refused)
    const rolled = await rollKey(db, { key, end: end.end }, now)
    return {
      value: rolled,
      target: `key:${key.id}`,
      // Never the new key: its prefix (shown in every listing) tells it apart.
      changed: {
        organisationId: key.organisation_id,
        name: key.name,
        prefix: key.display_prefix,
        replacedBy: rolled.row.display_prefix,
        oldKeyStops: rolled.old.revoked_at ?? rolled.old.expires_at,
      },
    }
  })
  const { old, row, key } = rolled
  const stops = old.revoked_at === null ? `works until ${old.expires_at}` : `was revoked at ${old.revoked_at}`
  return {
    data: { key, ...keyJson(row), replaces: keyJson(old), note: SHOWN_ONCE },
    text: [
      `rolled key ${old.id} (${old.display_prefix}…): it ${stops}`,
      `new key ${row.id} "${row.name}", scopes: ${row.scopes || '(none: catalog only)'}`,
      '',
      `  ${key}`,
      '',
      SHOWN_ONCE,
    ],
  }
}
