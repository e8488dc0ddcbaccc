/** `curriculum key create`: an API key for an organisation, printed once (cases/api-keys.ts). */
import type { Command } from 'commander'
import { systemClock } from '../../../clock.js'
import type { Scope } from '../../../domain/scopes.js'
import type { Audit } from '../../audit.js'
import { act } from '../../command-action.js'
import { ORG_NAMED, dateOption, defineCommand, scopesOption } from '../../options.js'
import type { CommandResult } from '../../output.js'
import { keyJson } from './views.js'

const SHOWN_ONCE =
  'This key is shown only now and cannot be shown again: only its hash is stored. Keep it in a secret store.'

export function defineKeyCreate(key: Command): void {
  defineCommand(
    key,
    'create',
    'Create an API key for an organisation; the key is printed once',
    [
      'curriculum key create --org "Acme Learning" --name "production" ' +
        '--scopes students:read,students:write --expires 2027-01-31',
    ],
    { audit: 'key.create' },
  )
    .requiredOption(...ORG_NAMED)
    .requiredOption('--name <label>', 'a label to tell keys apart, e.g. "production"')
    .option(
      '--scopes <scopes>',
      'comma-separated: students:read, students:write; none means catalog access only',
      scopesOption,
      [] as Scope[],
    )
    .option('--expires <date>', 'date the key stops working; never if left out', dateOption)
    .action(act(createKeyFor))
}

async function createKeyFor(command: Command, audit: Audit): Promise<CommandResult> {
  const options = command.opts<{ org: string; name: string; scopes: Scope[]; expires?: number }>()
  const { created, organisation } = await audit.change(async ({ db, config }) => {
    const [{ findOrganisation }, { createKey }] = await Promise.all([
      import('../../../storage/access-repository.js'),
      import('../../../cases/api-keys.js'),
    ])
    const organisation = await findOrganisation(db, options.org)
    const created = await createKey(
      db,
      {
        organisationId: organisation.id,
        name: options.name,
        scopes: options.scopes,
        expiresAt: options.expires ?? null,
        maxActiveKeys: config.maxKeysPerOrganisation,
      },
      systemClock.now(),
    )
    const { row } = created
    return {
      value: { created, organisation },
      target: `key:${row.id}`,
      // Never the key: the prefix (shown in every listing) tells it apart.
      changed: {
        organisation: organisation.name,
        name: row.name,
        prefix: row.display_prefix,
        scopes: row.scopes,
        expires: row.expires_at,
      },
    }
  })
  const { row } = created
  return {
    data: { key: created.key, ...keyJson(row, organisation.name), note: SHOWN_ONCE },
    text: [
      `created key ${row.id} "${row.name}" for ${organisation.name}`,
      `scopes: ${row.scopes || '(none: catalog only)'}; expires: ${row.expires_at ?? 'never'}`,
      '',
      `  ${created.key}`,
      '',
      SHOWN_ONCE,
    ],
  }
}
