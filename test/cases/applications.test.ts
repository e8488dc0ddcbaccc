/**
 * Access applications: one open application per account; approving creates the organisation
 * with the scopes granted and links the partner's account, rejecting needs a reason, and each
 * decision writes its audit row in its transaction; of two decisions on one application only the
 * first lands.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { decideApplication, type NewApplication, submitApplication } from '../../src/cases/applications.js'
import { IllegalTransition } from '../../src/domain/application-state.js'
import { createAccount, findAccount, markEmailVerified } from '../../src/storage/account-repository.js'
import { organisationById } from '../../src/storage/access-repository.js'
import { findApplication } from '../../src/storage/application-repository.js'
import { listAudit } from '../../src/storage/audit-repository.js'
import type { Storage } from '../../src/storage/connection.js'
import { createTestStorage } from '../helper.js'

const T0 = Date.parse('2026-03-02T09:00:00.000Z')

describe('access applications', () => {
  let storage: Storage
  let application: NewApplication
  beforeEach(async () => {
    storage = await createTestStorage({ catalog: false })
    const account = await createAccount(
      storage.db,
      { email: 'dana@acme.example', passwordHash: 'x', role: 'partner' },
      T0,
    )
    // Applying needs a verified address (test/cases/account-recovery.test.ts).
    await markEmailVerified(storage.db, account.id, account.email, T0)
    application = {
      accountId: account.id,
      organisationName: ' Acme Learning ',
      website: 'https://acme.example',
      contactName: 'Dana',
      contactEmail: 'dana@acme.example',
      intendedUse: 'Placement of new pupils in the right tier.',
      requestedScopes: ['students:read'],
    }
  })
  afterEach(() => storage.close())

  it('keeps one open application per account, and takes a new one after a rejection', async () => {
    const first = await submitApplication(storage.db, application, T0)
    expect(first).toMatchObject({ state: 'submitted', organisation_name: 'Acme Learning' })
    await expect(submitApplication(storage.db, application, T0 + 1)).rejects.toThrow(
      'You already have an application that is submitted.',
    )
    await expect(
      decideApplication(storage.db, first.id, { event: 'reject', reason: '  ' }, 'op', T0 + 2),
    ).rejects.toBeInstanceOf(IllegalTransition)
    await decideApplication(storage.db, first.id, { event: 'reject', reason: ' No agreement. ' }, 'op', T0 + 2)
    expect(await findApplication(storage.db, first.id)).toMatchObject({
      state: 'rejected',
      decision_reason: 'No agreement.',
    })
    expect((await submitApplication(storage.db, application, T0 + 3)).state).toBe('submitted')
  })

  it('approves: the organisation with the scopes granted, the account linked, the decision audited', async () => {
    const { id } = await submitApplication(storage.db, application, T0)
    const decided = await decideApplication(
      storage.db,
      id,
      { event: 'approve', grantedScopes: ['students:read'] },
      'dashboard:op',
      T0 + 1,
    )
    const organisation = await organisationById(storage.db, decided.organisation_id!)
    expect(organisation).toMatchObject({ name: 'Acme Learning', allowed_scopes: 'students:read' })
    expect((await findAccount(storage.db, application.accountId))?.organisation_id).toBe(organisation!.id)
    const [row] = await listAudit(storage.db)
    expect(row).toMatchObject({ actor: 'dashboard:op', action: 'application.approve', target: `application:${id}` })
    expect(JSON.parse(row!.detail)).toEqual({
      organisation: 'Acme Learning',
      organisationId: organisation!.id,
      grantedScopes: ['students:read'],
    })
    await expect(
      decideApplication(storage.db, id, { event: 'reject', reason: 'late' }, 'op', T0 + 2),
    ).rejects.toBeInstanceOf(IllegalTransition)
    expect(await listAudit(storage.db)).toHaveLength(1)
  })
})
