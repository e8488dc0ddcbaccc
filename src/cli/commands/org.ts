/**
 * `curriculum org ...`: partner organisations. Suspending one refuses its keys at once (on the
 * next access poll) without revoking them, so a reinstatement needs no new keys; it shows what
 * stops and asks first (confirm.ts).
 */
import type { Command } from 'commander'
import type { Kysely } from 'kysely'
import { systemClock } from '../../clock.js'
import type { OrganisationStatus } from '../../storage/access-repository.js'
import type { Database, OrganisationRow } from '../../storage/tables.js'
import { act } from '../command-action.js'
import { confirmChange, type PendingChange, withConfirmation } from '../confirm.js'
import { defineCommand, defineGroup } from '../options.js'
import { plural, table } from '../output.js'
import { withStorage } from '../storage-session.js'

function organisationJson(row: OrganisationRow) {
  return { id: row.id, name: row.name, status: row.status, createdAt: row.created_at }
}

function registerStatusChange(
  org: Command,
  name: 'suspend' | 'reinstate',
  status: OrganisationStatus,
  description: string,
  examples: readonly string[],
): Command {
  const command = defineCommand(org, `${name} <organisation>`, description, examples, {
    audit: `organisation.${name}`,
  })
  // Suspending ends every integration of the partner within seconds: it asks first, as the dashboard does.
  if (name === 'suspend') withConfirmation(command, 'suspend it')
  return command.action(
    act(async (command, audit) => {
      const [idOrName] = command.processedArgs as [string]
      if (name === 'suspend') {
        const confirmed = await confirmChange(
          command,
          await withStorage(({ storage }) => suspension(storage.db, idOrName)),
        )
        if (!confirmed.write) return confirmed.result
      }
      const { organisation, changed } = await audit.change(async ({ db }) => {
        const [{ findOrganisation }, { changeOrganisationStatus }] = await Promise.all([
          import('../../storage/access-repository.js'),
          import('../../cases/organisations.js'),
        ])
        const found = await findOrganisation(db, idOrName)
        const value = await changeOrganisationStatus(db, found.id, status)
        return {
          value,
          target: `organisation:${found.id}`,
          changed: { organisation: found.name, status: value.changed ? { from: found.status, to: status } : null },
        }
      })
      return {
        data: { organisation: organisationJson(organisation), changed },
        text: changed
          ? `${organisation.name} (${organisation.id}) is now ${status}`
          : `${organisation.name} (${organisation.id}) was already ${status}`,
      }
    }),
  )
}

/** What suspending would stop: the organisation's keys in force. Reads only. */
async function suspension(db: Kysely<Database>, idOrName: string): Promise<PendingChange> {
  const [{ findOrganisation, listApiKeys }, { keyRowState }] = await Promise.all([
    import('../../storage/access-repository.js'),
    import('../../storage/access-repository.js'),
  ])
  const organisation = await findOrganisation(db, idOrName)
  const now = systemClock.now()
  const keys = (await listApiKeys(db, organisation.id)).filter((key) => keyRowState(key, now) === 'active').length
  const active = organisation.status === 'active'
  return {
    lines: active
      ? [
          `suspend ${organisation.name} (${organisation.id}), ${plural(keys, 'key')} in force: every request with ` +
            'any of its keys gets 403 organisation_suspended within seconds, on every instance, and its partners ' +
            'cannot create live keys; nothing is deleted, and reinstating it makes its keys work again',
        ]
      : [],
    data: { preview: { organisation: organisationJson(organisation), keysInForce: keys } },
    ends: active,
    action: 'suspend it',
  }
}

export function registerOrg(program: Command): void {
  const org = defineGroup(
    program,
    'org',
    'Manage partner organisations',
    'curriculum org create --name "Acme Learning"',
  )

  defineCommand(org, 'create', 'Create a partner organisation', ['curriculum org create --name "Acme Learning"'], {
    audit: 'organisation.create',
  })
    .requiredOption('--name <name>', 'organisation name, unique, 1 to 120 characters')
    .action(
      act(async (command, audit) => {
        const { name } = command.opts<{ name: string }>()
        const row = await audit.change(async ({ db }) => {
          const { addOrganisation } = await import('../../cases/organisations.js')
          const row = await addOrganisation(db, name, systemClock.now())
          return { value: row, target: `organisation:${row.id}`, changed: { name: row.name, kind: row.kind } }
        })
        return { data: { organisation: organisationJson(row) }, text: `created organisation ${row.name} (${row.id})` }
      }),
    )

  defineCommand(org, 'list', 'List organisations', ['curriculum org list', 'curriculum org list --json']).action(
    act(async () => {
      const rows = await withStorage(async ({ storage }) =>
        (await import('../../storage/access-repository.js')).listOrganisations(storage.db),
      )
      return {
        data: { organisations: rows.map(organisationJson) },
        text:
          rows.length === 0
            ? 'no organisations'
            : table(
                ['ID', 'NAME', 'STATUS', 'CREATED'],
                rows.map((row) => [row.id, row.name, row.status, row.created_at]),
              ),
      }
    }),
  )

  registerStatusChange(
    org,
    'suspend',
    'suspended',
    'Suspend an organisation: its keys are refused until it is reinstated. Shows what stops and asks first.',
    [
      'curriculum org suspend "Acme Learning"                 # shows what stops, asks',
      'curriculum org suspend "Acme Learning" --dry-run',
      'curriculum org suspend 0b7f3a52-6c1e-4d1a-9f55-2f7f0c7e8a10 --yes --json',
    ],
  )
  registerStatusChange(org, 'reinstate', 'active', 'Reinstate a suspended organisation: its keys work again', [
    'curriculum org reinstate "Acme Learning"',
    'curriculum org reinstate 0b7f3a52-6c1e-4d1a-9f55-2f7f0c7e8a10 --json',
  ])
}
