/**
 * Passkeys on each engine, answered by a software authenticator: one registers and then signs in
 * without a password (only when it verified its user) or stands for the second step (only for
 * its own account); an answer, or a challenge, works once even when sent twice at once; a
 * challenge made for another purpose, another account or another origin, or out of time, and a
 * counter that went back, are refused; a passkey counts as a second factor; each change is audited.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  authenticationOptions,
  CHALLENGE_LIFETIME_MS,
  MAX_PASSKEYS,
  PasskeyRefused,
  registerPasskey,
  registrationOptions,
  relyingParty,
  removePasskey,
  verifyPasskey,
} from '../../src/cases/passkeys.js'
import { hasSecondFactor } from '../../src/cases/second-factor.js'
import { createAccount } from '../../src/storage/account-repository.js'
import type { Storage } from '../../src/storage/connection.js'
import { passkeysOf } from '../../src/storage/passkey-repository.js'
import type { AccountRow } from '../../src/storage/tables.js'
import { createTestStorage } from '../helper.js'
import { SoftwarePasskey } from '../support/software-passkey.js'

const T0 = Date.parse('2026-03-02T09:00:00.000Z')
const RP = relyingParty('https://curriculum.example.org')
const device = (userVerified = true) => new SoftwarePasskey({ origin: RP.origin, rpId: RP.id, userVerified })

describe('passkeys', () => {
  let storage: Storage
  let dana: AccountRow
  let erin: AccountRow
  beforeEach(async () => {
    storage = await createTestStorage({ catalog: false })
    dana = await createAccount(storage.db, { email: 'dana@acme.example', passwordHash: 'x', role: 'partner' }, T0)
    erin = await createAccount(storage.db, { email: 'erin@acme.example', passwordHash: 'x', role: 'operator' }, T0)
  })
  afterEach(() => storage.close())

  async function registered(account: AccountRow, key = device(), name = 'laptop'): Promise<SoftwarePasskey> {
    const options = await registrationOptions(storage.db, account, RP, T0)
    await registerPasskey(storage.db, account, { name, response: key.register(options) as never }, RP, T0)
    return key
  }
  const refusedAs = async (work: Promise<unknown>, reason: string) => {
    const error = await work.then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(PasskeyRefused)
    expect((error as PasskeyRefused).reason).toBe(reason)
  }

  it('registers a passkey that then signs in without a password, and counts as a second factor', async () => {
    expect(await hasSecondFactor(storage.db, dana.id)).toBe(false)
    const key = await registered(dana)
    const [stored] = await passkeysOf(storage.db, dana.id)
    expect(stored).toMatchObject({ name: 'laptop', account_id: dana.id, counter: 1, last_used_at: null })
    expect(await hasSecondFactor(storage.db, dana.id)).toBe(true)
    const options = await authenticationOptions(storage.db, null, RP, T0 + 1)
    expect(options.allowCredentials).toEqual([])
    expect(options.userVerification).toBe('required')
    const signedIn = await verifyPasskey(storage.db, key.authenticate(options) as never, null, RP, T0 + 2)
    expect(signedIn.id).toBe(dana.id)
    expect((await passkeysOf(storage.db, dana.id))[0]).toMatchObject({ counter: 2 })
    const audit = await storage.db.selectFrom('audit_log').select(['actor', 'action']).execute()
    expect(audit).toEqual([{ actor: 'account:dana@acme.example', action: 'second_factor.passkey_added' }])
  })

  it('refuses a passwordless sign-in by a passkey that did not verify its user, but takes it as a second step', async () => {
    const key = await registered(dana, device(false))
    const open = await authenticationOptions(storage.db, null, RP, T0)
    await refusedAs(verifyPasskey(storage.db, key.authenticate(open) as never, null, RP, T0), 'not-verified')
    const step = await authenticationOptions(storage.db, dana.id, RP, T0)
    expect(step.allowCredentials?.map((c) => c.id)).toEqual([key.id.toString('base64url')])
    expect((await verifyPasskey(storage.db, key.authenticate(step) as never, dana.id, RP, T0)).id).toBe(dana.id)
  })

  it('takes one answer once, even sent twice at once, and refuses a counter that went back', async () => {
    const key = await registered(dana)
    const options = await authenticationOptions(storage.db, null, RP, T0)
    const answer = key.authenticate(options) as never
    const results = await Promise.allSettled(
      [1, 2, 3, 4].map(() => verifyPasskey(storage.db, answer, null, RP, T0 + 1)),
    )
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1)
    for (const r of results.filter((r) => r.status === 'rejected'))
      expect(((r as PromiseRejectedResult).reason as PasskeyRefused).reason).toMatch(/used|not-verified/)
    key.counter = 0
    const again = await authenticationOptions(storage.db, null, RP, T0 + 2)
    await refusedAs(verifyPasskey(storage.db, key.authenticate(again) as never, null, RP, T0 + 2), 'not-verified')
  })

  it('refuses challenges of another purpose, account or origin, and out of time', async () => {
    const key = await registered(dana)
    const forErin = await authenticationOptions(storage.db, erin.id, RP, T0)
    await refusedAs(verifyPasskey(storage.db, key.authenticate(forErin) as never, dana.id, RP, T0), 'not-verified')
    await refusedAs(verifyPasskey(storage.db, key.authenticate(forErin) as never, erin.id, RP, T0), 'other-account')
    const registration = await registrationOptions(storage.db, dana, RP, T0)
    await refusedAs(verifyPasskey(storage.db, key.authenticate(registration) as never, null, RP, T0), 'not-verified')
    const open = await authenticationOptions(storage.db, null, RP, T0)
    const late = T0 + CHALLENGE_LIFETIME_MS
    await refusedAs(verifyPasskey(storage.db, key.authenticate(open) as never, null, RP, late), 'not-verified')
    const elsewhere = key.authenticate(open, 'https://curriculum.example.org.evil.example') as never
    await refusedAs(verifyPasskey(storage.db, elsewhere, null, RP, T0), 'not-verified')
    const stranger = device()
    await refusedAs(verifyPasskey(storage.db, stranger.authenticate(open) as never, null, RP, T0), 'unknown')
  })

  it('refuses a registration answer twice, a bad name, and more than the cap; removes a passkey, audited', async () => {
    const options = await registrationOptions(storage.db, dana, RP, T0)
    const key = device()
    const answer = key.register(options) as never
    await refusedAs(registerPasskey(storage.db, dana, { name: ' ', response: answer }, RP, T0), 'bad-name')
    await registerPasskey(storage.db, dana, { name: 'phone', response: answer }, RP, T0)
    await refusedAs(registerPasskey(storage.db, dana, { name: 'phone', response: answer }, RP, T0), 'used')
    for (let i = 1; i < MAX_PASSKEYS; i++) await registered(dana, device(), `key ${i}`)
    await refusedAs(registered(dana, device(), 'one too many'), 'too-many')
    expect(await removePasskey(storage.db, erin, key.id.toString('base64url'), T0)).toBe(false)
    expect(await removePasskey(storage.db, dana, key.id.toString('base64url'), T0)).toBe(true)
    expect(await passkeysOf(storage.db, dana.id)).toHaveLength(MAX_PASSKEYS - 1)
    const removed = await storage.db
      .selectFrom('audit_log')
      .select('detail')
      .where('action', '=', 'second_factor.passkey_removed')
      .execute()
    expect(removed.map((r) => JSON.parse(r.detail))).toEqual([{ name: 'phone' }])
  })
})
