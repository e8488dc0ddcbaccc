/**
 * Accounts, sessions, key views and shared settings: sign-up creates an account once and says
 * nothing else; an operator is refused an address that has an account; a session lives from
 * sign-in to sign-out; a key view is deleted when its time is up, by the next view added or
 * read; the first stored shared value is everyone's.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createOperator, endSession, signUp, startSession } from '../../src/cases/accounts.js'
import { addKeyView, findKeyView, hideKeyView } from '../../src/cases/key-views.js'
import { sharedSecret, sharedValue } from '../../src/cases/shared-settings.js'
import { ConflictError } from '../../src/domain/errors.js'
import { createApiKey, createOrganisation } from '../../src/storage/access-repository.js'
import { accountForSession, findAccountByEmail } from '../../src/storage/account-repository.js'
import { keyViewId } from '../../src/storage/key-view-repository.js'
import type { Storage } from '../../src/storage/connection.js'
import type { KeyViewRow } from '../../src/storage/tables.js'
import { createTestStorage } from '../helper.js'

const T0 = Date.parse('2026-03-02T09:00:00.000Z')

describe('accounts and sessions', () => {
  let storage: Storage
  beforeEach(async () => {
    storage = await createTestStorage({ catalog: false })
  })
  afterEach(() => storage.close())

  it('signs a partner up once, and refuses an operator an address in use', async () => {
    expect(await signUp(storage.db, { email: ' Dana@Acme.example ', passwordHash: 'a' }, T0)).toBe(true)
    expect(await signUp(storage.db, { email: 'dana@acme.example', passwordHash: 'b' }, T0)).toBe(false)
    expect(await findAccountByEmail(storage.db, 'dana@acme.example')).toMatchObject({
      role: 'partner',
      password_hash: 'a',
    })
    await expect(
      createOperator(storage.db, { email: 'dana@acme.example', passwordHash: 'c' }, T0),
    ).rejects.toBeInstanceOf(ConflictError)
    expect((await createOperator(storage.db, { email: 'ops@example.org', passwordHash: 'c' }, T0)).role).toBe(
      'operator',
    )
  })

  it('keeps a session from its start to its end or its expiry', async () => {
    const operator = await createOperator(storage.db, { email: 'ops@example.org', passwordHash: 'c' }, T0)
    const { token } = await startSession(storage.db, operator.id, { address: '192.0.2.1', userAgent: null }, T0, 60_000)
    expect((await accountForSession(storage.db, token, T0 + 59_999))?.account.id).toBe(operator.id)
    expect(await accountForSession(storage.db, token, T0 + 60_000)).toBeUndefined()
    await endSession(storage.db, token)
    expect(await accountForSession(storage.db, token, T0)).toBeUndefined()
  })

  it('deletes expired key views, anyone’s, whenever a view is added or read', async () => {
    const operator = await createOperator(storage.db, { email: 'ops@example.org', passwordHash: 'c' }, T0)
    const organisation = await createOrganisation(storage.db, 'Acme', T0)
    const { row: key } = await createApiKey(
      storage.db,
      { organisationId: organisation.id, name: 'k', scopes: [], expiresAt: null },
      T0,
    )
    const view = (token: string, expiresAt: number): KeyViewRow => ({
      id: keyViewId(token),
      account_id: operator.id,
      key_id: key.id,
      welcome: 0,
      sealed_key: 'sealed',
      expires_at: new Date(expiresAt).toISOString(),
    })
    await addKeyView(storage.db, view('a', T0 + 1000), T0)
    await addKeyView(storage.db, view('b', T0 + 5000), T0 + 2000)
    expect(await findKeyView(storage.db, 'a', operator.id, T0)).toBeUndefined()
    expect(await findKeyView(storage.db, 'b', 'someone else', T0)).toBeUndefined()
    expect((await findKeyView(storage.db, 'b', operator.id, T0 + 4999))?.sealed_key).toBe('sealed')
    await hideKeyView(storage.db, 'b', operator.id)
    expect(await findKeyView(storage.db, 'b', operator.id, T0)).toBeUndefined()
  })

  it('gives every caller the first value stored under a name', async () => {
    expect(await sharedValue(storage.db, 'x', 'first')).toBe('first')
    expect(await sharedValue(storage.db, 'x', 'second')).toBe('first')
    const secret = await sharedSecret(storage.db, 'y')
    expect(secret).toHaveLength(32)
    expect(await sharedSecret(storage.db, 'y')).toEqual(secret)
  })
})
