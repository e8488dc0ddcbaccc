/**
 * Verification, reset and the Account page's changes, on each engine: every mailed link works
 * once, within its time, for the address it was sent to; the hourly limits hold; using a reset
 * link ends every session and retires the account's other links; and when requests race, one
 * use of a link (or of two links of one account) wins and the rest are refused.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { LINK_RULES } from '../../src/cases/account-links.js'
import {
  changePassword,
  confirmEmailChange,
  endEverySession,
  endSessionById,
  requestEmailChange,
} from '../../src/cases/account-settings.js'
import { mailAfterSignUp, SIGN_UP_AGAIN_NOTICES_PER_DAY, signUp, startSession } from '../../src/cases/accounts.js'
import { submitApplication, UnverifiedEmail } from '../../src/cases/applications.js'
import { sendVerificationLink, verifyEmail } from '../../src/cases/email-verification.js'
import { requestPasswordReset, resetPassword } from '../../src/cases/password-reset.js'
import { bearerTokenHash } from '../../src/domain/bearer-token.js'
import { findAccountByEmail, sessionsOf } from '../../src/storage/account-repository.js'
import type { Storage } from '../../src/storage/connection.js'
import type { AccountRow, MailRow } from '../../src/storage/tables.js'
import { createTestStorage } from '../helper.js'

const T0 = Date.parse('2026-03-02T09:00:00.000Z')
const HOUR = 3_600_000
const URL = 'https://curriculum.example.org'
const ORIGIN = { address: '192.0.2.7', userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0' }

describe('account links', () => {
  let storage: Storage
  beforeEach(async () => {
    storage = await createTestStorage({ catalog: false })
  })
  afterEach(() => storage.close())

  const mails = (kind?: string): Promise<MailRow[]> => {
    let query = storage.db.selectFrom('mail_outbox').selectAll().orderBy('id')
    if (kind !== undefined) query = query.where('kind', '=', kind)
    return query.execute()
  }
  /** The token of the link in the newest message of `kind`. */
  const tokenIn = async (kind: string): Promise<string> => {
    const row = (await mails(kind)).at(-1)
    const token = /\?token=([A-Za-z0-9_-]{43})/.exec(row?.text_body ?? '')?.[1]
    if (token === undefined) throw new Error(`no link in the last ${kind} message`)
    return token
  }
  const account = async (email = 'dana@acme.example'): Promise<AccountRow> =>
    (await findAccountByEmail(storage.db, email))!
  async function newPartner(email = 'dana@acme.example'): Promise<AccountRow> {
    const created = await signUp(storage.db, { email, passwordHash: 'old' }, T0)
    await mailAfterSignUp(storage.db, { email, created, publicUrl: URL }, T0)
    return account(email)
  }
  const application = (accountId: string) => ({
    accountId,
    organisationName: 'Acme',
    website: 'https://acme.example',
    contactName: 'Dana',
    contactEmail: 'dana@acme.example',
    intendedUse: 'Showing lessons to our students in class.',
    requestedScopes: [],
  })

  it('verifies a new address with the link mailed at sign-up, once, and only then accepts an application', async () => {
    const dana = await newPartner()
    const [mail] = await mails()
    expect(mail).toMatchObject({ kind: 'verify-email', recipient: 'dana@acme.example', state: 'pending' })
    expect(mail!.text_body).toContain(`${URL}/dashboard/verify-email?token=`)
    expect(mail!.html_body).toContain('Verify this address</a>')
    await expect(submitApplication(storage.db, application(dana.id), T0)).rejects.toBeInstanceOf(UnverifiedEmail)
    const token = await tokenIn('verify-email')
    const stored = await storage.db.selectFrom('account_links').selectAll().execute()
    expect(stored).toHaveLength(1)
    expect(stored[0]!.token_hash).toBe(bearerTokenHash(token))
    expect(JSON.stringify(stored)).not.toContain(token)
    expect(await verifyEmail(storage.db, token, T0 + HOUR)).toMatchObject({ ok: true })
    expect((await account()).email_verified_at).toBe(new Date(T0 + HOUR).toISOString())
    expect(await verifyEmail(storage.db, token, T0 + HOUR)).toEqual({ ok: false, problem: 'used' })
    expect(await sendVerificationLink(storage.db, dana.id, URL, T0 + HOUR)).toBe('verified-already')
    await expect(submitApplication(storage.db, application(dana.id), T0 + HOUR)).resolves.toMatchObject({
      state: 'submitted',
    })
    const audit = await storage.db.selectFrom('audit_log').selectAll().execute()
    expect(audit.map((row) => row.action)).toEqual(['account.email-verified'])
  })

  it('keeps a verification link for 24 hours, sends at most 3 an hour, and knows no forged or cut token', async () => {
    const dana = await newPartner()
    const first = await tokenIn('verify-email')
    expect(await sendVerificationLink(storage.db, dana.id, URL, T0 + 1)).toBe('queued')
    expect(await sendVerificationLink(storage.db, dana.id, URL, T0 + 2)).toBe('queued')
    expect(await sendVerificationLink(storage.db, dana.id, URL, T0 + 3)).toBe('limited')
    expect(await mails('verify-email')).toHaveLength(3)
    expect(await sendVerificationLink(storage.db, dana.id, URL, T0 + HOUR + 1)).toBe('queued')
    for (const forged of [
      '',
      'x',
      first.slice(0, 42),
      `${first}A`,
      first.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')),
    ])
      expect(await verifyEmail(storage.db, forged, T0 + 10)).toEqual({ ok: false, problem: 'unknown' })
    expect(await verifyEmail(storage.db, first, T0 + LINK_RULES['verify-email'].lifetimeMs)).toEqual({
      ok: false,
      problem: 'expired',
    })
    expect(await verifyEmail(storage.db, first, T0 + LINK_RULES['verify-email'].lifetimeMs - 1)).toMatchObject({
      ok: true,
    })
  })

  it('mails an address that has an account word of another sign-up, at most 3 times a day', async () => {
    await newPartner()
    for (let i = 0; i < SIGN_UP_AGAIN_NOTICES_PER_DAY + 2; i++) {
      const created = await signUp(storage.db, { email: 'Dana@acme.example', passwordHash: 'x' }, T0 + i)
      expect(created).toBe(false)
      await mailAfterSignUp(storage.db, { email: 'dana@acme.example', created, publicUrl: URL }, T0 + i)
    }
    const notices = await mails('sign-up-again')
    expect(notices).toHaveLength(SIGN_UP_AGAIN_NOTICES_PER_DAY)
    expect(notices[0]!.text_body).toContain(`${URL}/dashboard/forgot-password`)
    expect(notices[0]!.text_body).not.toContain('token=')
    expect((await account()).password_hash).toBe('old')
  })

  it('resets a password with a link valid for an hour: sessions end, other links retire, the address is proven', async () => {
    const dana = await newPartner()
    const verifyToken = await tokenIn('verify-email')
    await startSession(storage.db, dana.id, ORIGIN, T0, 8 * HOUR)
    await startSession(storage.db, dana.id, ORIGIN, T0, 8 * HOUR)
    expect(await requestPasswordReset(storage.db, 'nobody@acme.example', URL, T0)).toBe('no-account')
    expect(await requestPasswordReset(storage.db, 'dana@acme.example', URL, T0)).toBe('queued')
    const older = await tokenIn('password-reset')
    expect(await requestPasswordReset(storage.db, 'DANA@acme.example ', URL, T0 + 1)).toBe('queued')
    const token = await tokenIn('password-reset')
    expect(await requestPasswordReset(storage.db, 'dana@acme.example', URL, T0 + 2)).toBe('queued')
    expect(await requestPasswordReset(storage.db, 'dana@acme.example', URL, T0 + 3)).toBe('limited')
    expect(await mails('password-reset')).toHaveLength(3)

    const reset = { token, passwordHash: 'new', publicUrl: URL }
    // Sent at T0 + 1: it works until an hour later, and not at that instant.
    expect(await resetPassword(storage.db, reset, T0 + 1 + HOUR)).toEqual({ ok: false, problem: 'expired' })
    expect(await resetPassword(storage.db, reset, T0 + HOUR)).toMatchObject({ ok: true })
    const after = await account()
    expect(after.password_hash).toBe('new')
    expect(after.email_verified_at).not.toBeNull()
    expect(await sessionsOf(storage.db, dana.id, T0 + HOUR)).toEqual([])
    expect(await resetPassword(storage.db, reset, T0 + HOUR)).toEqual({ ok: false, problem: 'used' })
    expect(await resetPassword(storage.db, { ...reset, token: older }, T0 + 10)).toEqual({ ok: false, problem: 'used' })
    expect(await verifyEmail(storage.db, verifyToken, T0 + 10)).toEqual({ ok: false, problem: 'used' })
    expect((await account()).password_hash).toBe('new')
    const [changed] = await mails('password-changed')
    expect(changed).toMatchObject({ recipient: 'dana@acme.example' })
    expect(changed!.text_body).not.toContain('token=')
  })

  it('lets exactly one of many concurrent uses of a reset link, or of two links of one account, win', async () => {
    await newPartner()
    for (let round = 0; round < 3; round++) {
      const at = T0 + round * 2 * HOUR
      await requestPasswordReset(storage.db, 'dana@acme.example', URL, at)
      const a = await tokenIn('password-reset')
      await requestPasswordReset(storage.db, 'dana@acme.example', URL, at)
      const b = await tokenIn('password-reset')
      const tries = [a, a, b, b, a, b].map((token, i) =>
        resetPassword(storage.db, { token, passwordHash: `hash-${round}-${i}`, publicUrl: URL }, at + 1),
      )
      const results = await Promise.all(tries)
      expect(
        results.filter((r) => r.ok),
        `round ${round}`,
      ).toHaveLength(1)
      const winner = results.findIndex((r) => r.ok)
      expect((await account()).password_hash).toBe(`hash-${round}-${winner}`)
    }
    const resets = await storage.db
      .selectFrom('audit_log')
      .selectAll()
      .where('action', '=', 'account.password-reset')
      .execute()
    expect(resets).toHaveLength(3)
  })

  it('changes the address through a link to the new one, telling the old, and never onto another account’s', async () => {
    const dana = await newPartner()
    const verifyToken = await tokenIn('verify-email')
    expect(await requestEmailChange(storage.db, dana, 'dana@new.example', URL, T0)).toBe(true)
    const link = await tokenIn('email-change')
    const [toNew] = await mails('email-change')
    const [toOld] = await mails('email-change-notice')
    expect(toNew!.recipient).toBe('dana@new.example')
    expect(toOld!.recipient).toBe('dana@acme.example')
    expect(toOld!.text_body).toContain('dana@new.example')
    expect(toOld!.text_body).not.toContain('token=')
    expect((await account()).email).toBe('dana@acme.example')

    // Another account takes the address meanwhile: the change is refused and the link kept.
    const other = await newPartner('dana@new.example')
    await expect(confirmEmailChange(storage.db, link, T0 + 1)).rejects.toThrow('Another account has this e-mail')
    await storage.db.updateTable('accounts').set({ email: 'moved@new.example' }).where('id', '=', other.id).execute()
    expect(await confirmEmailChange(storage.db, link, T0 + 2)).toMatchObject({ ok: true })
    const moved = await account('dana@new.example')
    expect(moved.id).toBe(dana.id)
    expect(moved.email_verified_at).toBe(new Date(T0 + 2).toISOString())
    expect(await confirmEmailChange(storage.db, link, T0 + 3)).toEqual({ ok: false, problem: 'used' })
    expect(await verifyEmail(storage.db, verifyToken, T0 + 3)).toEqual({ ok: false, problem: 'used' })
    expect(await findAccountByEmail(storage.db, 'dana@acme.example')).toBeUndefined()
  })

  it('lets one of two concurrent changes of address win', async () => {
    const dana = await newPartner()
    await requestEmailChange(storage.db, dana, 'one@new.example', URL, T0)
    const one = await tokenIn('email-change')
    await requestEmailChange(storage.db, dana, 'two@new.example', URL, T0)
    const two = await tokenIn('email-change')
    const results = await Promise.all(
      [one, two, one, two].map((token) => confirmEmailChange(storage.db, token, T0 + 1)),
    )
    expect(results.filter((r) => r.ok)).toHaveLength(1)
    expect(['one@new.example', 'two@new.example']).toContain(
      (await findAccountByEmail(storage.db, 'one@new.example'))?.email ??
        (await findAccountByEmail(storage.db, 'two@new.example'))?.email,
    )
  })

  it('changes a password keeping only the session that changed it, and ends sessions one at a time or all', async () => {
    const dana = await newPartner()
    const mine = await startSession(storage.db, dana.id, ORIGIN, T0, 8 * HOUR)
    await startSession(storage.db, dana.id, { address: '198.51.100.2', userAgent: null }, T0, 8 * HOUR)
    await startSession(storage.db, dana.id, { address: '198.51.100.3', userAgent: null }, T0, 8 * HOUR)
    await requestPasswordReset(storage.db, 'dana@acme.example', URL, T0)
    const resetToken = await tokenIn('password-reset')
    const change = { passwordHash: 'changed', keepTokenHash: bearerTokenHash(mine.token), publicUrl: URL }
    expect(await changePassword(storage.db, dana, change, T0 + 1)).toBe(2)
    expect((await sessionsOf(storage.db, dana.id, T0 + 1)).map((s) => s.id)).toEqual([mine.id])
    expect(await resetPassword(storage.db, { token: resetToken, passwordHash: 'x', publicUrl: URL }, T0 + 2)).toEqual({
      ok: false,
      problem: 'used',
    })
    expect(await mails('password-changed')).toHaveLength(1)

    const erin = await newPartner('erin@acme.example')
    const hers = await startSession(storage.db, erin.id, ORIGIN, T0, 8 * HOUR)
    expect(await endSessionById(storage.db, dana, hers.id, T0 + 3)).toBe(false)
    expect(await sessionsOf(storage.db, erin.id, T0 + 3)).toHaveLength(1)
    const another = await startSession(storage.db, dana.id, ORIGIN, T0 + 4, 8 * HOUR)
    expect(await endSessionById(storage.db, dana, another.id, T0 + 5)).toBe(true)
    expect(await endSessionById(storage.db, dana, another.id, T0 + 5)).toBe(false)
    expect(await endEverySession(storage.db, dana, T0 + 6)).toBe(1)
    expect(await sessionsOf(storage.db, dana.id, T0 + 6)).toEqual([])
    expect(await sessionsOf(storage.db, erin.id, T0 + 6)).toHaveLength(1)
  })
})
