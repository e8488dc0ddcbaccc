/**
 * `curriculum key ...`: API keys. A key is shown once, when it is created; only its SHA-256 is
 * stored, so neither a listing nor a leaked database can reveal one.
 */
import type { Command } from 'commander'
import { isoAt, systemClock } from '../../clock.js'
import type { Scope } from '../../domain/scopes.js'
import { keyRowState } from '../../storage/access-repository.js'
import type { ApiKeyRow } from '../../storage/tables.js'
import { act } from '../command-action.js'
import { dateOption, defineCommand, defineGroup, scopesOption } from '../options.js'
import { table } from '../output.js'
import { withStorage } from '../storage-session.js'

/** Everything about a key except its secret and hash, which no listing ever shows. */
function keyJson(row: ApiKeyRow, organisation?: string, now = systemClock.now()) {
  return {
    id: row.id,
    displayPrefix: row.display_prefix,
    name: row.name,
    organisationId: row.organisation_id,
    ...(organisation === undefined ? {} : { organisation }),
    scopes: row.scopes.split(' ').filter((scope) => scope !== ''),
    mode: row.mode,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
    lastUsedAt: row.last_used_at,
    state: keyRowState(row, now),
  }
}

const SHOWN_ONCE =
  'This key is shown only now and cannot be shown again: only its hash is stored. Keep it in a secret store.'

export function registerKey(program: Command): void {
  const key = defineGroup(
    program,
    'key',
    'Create, list and revoke API keys',
    'curriculum key list --org "Acme Learning"',
  )

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
    .requiredOption('--org <organisation>', 'organisation id or exact name')
    .requiredOption('--name <label>', 'a label to tell keys apart, e.g. "production"')
    .option(
      '--scopes <scopes>',
      'comma-separated: students:read, students:write; none means catalog access only',
      scopesOption,
      [] as Scope[],
    )
    .option('--expires <date>', 'date the key stops working; never if left out', dateOption)
    .action(
      act(async (command, audit) => {
        const options = command.opts<{ org: string; name: string; scopes: Scope[]; expires?: number }>()
        const { created, organisation } = await audit.change(async ({ db, config }) => {
          const [{ findOrganisation }, { createKey }] = await Promise.all([
            import('../../storage/access-repository.js'),
            import('../../cases/api-keys.js'),
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
      }),
    )

  defineCommand(key, 'list', 'List API keys (never the keys themselves)', [
    'curriculum key list',
    'curriculum key list --org "Acme Learning" --json',
  ])
    .option('--org <organisation>', 'only this organisation (id or exact name)')
    .action(
      act(async (command) => {
        const options = command.opts<{ org?: string }>()
        const now = systemClock.now()
        const { rows, names } = await withStorage(async ({ storage }) => {
          const { findOrganisation, listApiKeys, listOrganisations } = await import(
            '../../storage/access-repository.js'
          )
          const organisationId =
            options.org === undefined ? undefined : (await findOrganisation(storage.db, options.org)).id
          const names = new Map((await listOrganisations(storage.db)).map((org) => [org.id, org.name]))
          return { rows: await listApiKeys(storage.db, organisationId), names }
        })
        return {
          data: { keys: rows.map((row) => keyJson(row, names.get(row.organisation_id), now)) },
          text:
            rows.length === 0
              ? 'no keys'
              : table(
                  [
                    'ID',
                    'PREFIX',
                    'NAME',
                    'ORGANISATION',
                    'SCOPES',
                    'STATE',
                    'CREATED',
                    'EXPIRES',
                    'REVOKED',
                    'LAST USED',
                  ],
                  rows.map((row) => [
                    row.id,
                    `${row.display_prefix}…`,
                    row.name,
                    names.get(row.organisation_id),
                    row.scopes.replaceAll(' ', ','),
                    keyRowState(row, now),
                    row.created_at,
                    row.expires_at,
                    row.revoked_at,
                    row.last_used_at,
                  ]),
                ),
        }
      }),
    )

  defineCommand(
    key,
    'revoke <key>',
    'Revoke an API key, named by its id or display prefix; it stops working at once',
    ['curriculum key revoke cur_live_AbC123', 'curriculum key revoke 7c9e6679-7425-40de-944b-e07fc1f90ae7 --json'],
    { audit: 'key.revoke' },
  ).action(
    act(async (command, audit) => {
      const [idOrPrefix] = command.processedArgs as [string]
      const now = systemClock.now()
      const row = await audit.change(async ({ db }) => {
        const { revokeKey } = await import('../../cases/api-keys.js')
        // Listings show the prefix followed by an ellipsis; accept it pasted back as it is.
        const row = await revokeKey(db, idOrPrefix.replace(/…$/, ''), now)
        return {
          value: row,
          target: `key:${row.id}`,
          changed: {
            organisationId: row.organisation_id,
            name: row.name,
            prefix: row.display_prefix,
            revokedAt: row.revoked_at,
            alreadyRevoked: row.revoked_at !== isoAt(now),
          },
        }
      })
      const already = row.revoked_at !== isoAt(now)
      return {
        data: { key: keyJson(row), alreadyRevoked: already },
        text: already
          ? `key ${row.id} (${row.display_prefix}…) was already revoked at ${row.revoked_at}`
          : `revoked key ${row.id} (${row.display_prefix}…) at ${row.revoked_at}`,
      }
    }),
  )
}
