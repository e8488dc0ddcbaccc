/**
 * The operator's changes from the dashboard: revoking an organisation's key and suspending or
 * reinstating an organisation each write the change and its audit row together; a suspension of
 * a suspended organisation is refused and writes neither.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { revokeOrganisationKey } from '../../src/cases/api-keys.js'
import { suspendOrReinstate } from '../../src/cases/organisations.js'
import { ManualClock } from '../../src/clock.js'
import { IllegalTransition } from '../../src/domain/application-state.js'
import { createApiKey, createOrganisation, findApiKey, organisationById } from '../../src/storage/access-repository.js'
import { listAudit } from '../../src/storage/audit-repository.js'
import type { Storage } from '../../src/storage/connection.js'
import type { OrganisationRow } from '../../src/storage/tables.js'
import { createTestStorage } from '../helper.js'

describe("the operator's audited changes", () => {
  let storage: Storage
  let acme: OrganisationRow
  const clock = new ManualClock('2026-03-02T09:00:00.000Z')
  beforeEach(async () => {
    storage = await createTestStorage({ catalog: false })
    acme = await createOrganisation(storage.db, 'Acme', clock.now())
  })
  afterEach(() => storage.close())

  it('revokes a key and records who did it, with the key named by prefix and name', async () => {
    const { row: key } = await createApiKey(
      storage.db,
      { organisationId: acme.id, name: 'production', scopes: [], expiresAt: null },
      clock.now(),
    )
    await revokeOrganisationKey(storage.db, { key, organisation: 'Acme' }, { actor: 'dashboard:ops' }, clock)
    expect((await findApiKey(storage.db, key.id))?.revoked_at).toBe(new Date(clock.now()).toISOString())
    const [row] = await listAudit(storage.db)
    expect(row).toMatchObject({ actor: 'dashboard:ops', action: 'key.revoke', target: `key:${key.id}` })
    expect(JSON.parse(row!.detail)).toEqual({ organisation: 'Acme', prefix: key.display_prefix, name: 'production' })
  })

  it('suspends and reinstates, each audited, and refuses a second suspension without a row', async () => {
    await suspendOrReinstate(storage.db, { organisation: acme, event: 'suspend' }, { actor: 'dashboard:ops' }, clock)
    const suspended = (await organisationById(storage.db, acme.id))!
    expect(suspended.status).toBe('suspended')
    await expect(
      suspendOrReinstate(storage.db, { organisation: suspended, event: 'suspend' }, { actor: 'dashboard:ops' }, clock),
    ).rejects.toBeInstanceOf(IllegalTransition)
    await suspendOrReinstate(
      storage.db,
      { organisation: suspended, event: 'reinstate' },
      { actor: 'dashboard:ops' },
      clock,
    )
    expect((await organisationById(storage.db, acme.id))?.status).toBe('active')
    const rows = await listAudit(storage.db)
    expect(rows.map((row) => [row.action, row.target, row.detail]).sort()).toEqual([
      ['organisation.reinstate', `organisation:${acme.id}`, '{"organisation":"Acme"}'],
      ['organisation.suspend', `organisation:${acme.id}`, '{"organisation":"Acme"}'],
    ])
  })
})
