/**
 * `curriculum operator list` and `operator reset-2fa` as an operator runs them, on each engine:
 * the reset removes the authenticator, recovery codes and passkeys and ends the sessions, audited as
 * `cli:<user>`; it refuses an address that is not an operator's.
 */
import { describe, expect, it } from 'vitest'
import { startSession } from '../../src/cases/accounts.js'
import { beginTotpEnrolment, confirmTotpEnrolment, secondFactorKey } from '../../src/cases/second-factor.js'
import { findAccountByEmail } from '../../src/storage/account-repository.js'
import { cli, ENGINES, jsonOf, useCliHarness, withStorage } from './cli-harness.js'
import { codeAtStep } from '../support/authenticator.js'

useCliHarness()

describe.each(ENGINES)('operator accounts on %s', (_engine, databaseUrlOf) => {
  it('lists operators, and resets a lost second factor, audited', async () => {
    const databaseUrl = databaseUrlOf()
    const created = jsonOf(await cli(['operator', 'create', '--email', 'ada@ops.example', '--json'], { databaseUrl }))
    expect(created.account).toMatchObject({ email: 'ada@ops.example', role: 'operator', operatorRole: 'admin' })
    const token = await withStorage(databaseUrl, async ({ db }) => {
      const account = (await findAccountByEmail(db, 'ada@ops.example'))!
      const store = { db, key: await secondFactorKey(db) }
      const { secret } = await beginTotpEnrolment(store, account, Date.now())
      const step = Math.floor(Date.now() / 30_000)
      expect((await confirmTotpEnrolment(store, account, codeAtStep(secret, step), Date.now())).ok).toBe(true)
      return (await startSession(db, account.id, { address: '192.0.2.1', userAgent: null }, Date.now(), 3_600_000))
        .token
    })
    expect(token).toBeTruthy()
    const listed = jsonOf(await cli(['operator', 'list', '--json'], { databaseUrl }))
    expect(listed.operators).toMatchObject([{ email: 'ada@ops.example', role: 'admin', secondFactor: true }])
    const text = await cli(['operator', 'list'], { databaseUrl })
    expect(text.stdout).toMatch(/ada@ops\.example\s+admin\s+on/)

    const reset = await cli(['operator', 'reset-2fa', '--email', 'ADA@ops.example', '--actor', 'lost-phone-desk'], {
      databaseUrl,
    })
    expect(reset.status).toBe(0)
    expect(reset.stdout).toContain(
      'removed the second factor of ada@ops.example (authenticator, recovery codes and passkeys)',
    )
    expect(reset.stdout).toContain('1 session ended')
    await withStorage(databaseUrl, async ({ db }) => {
      const account = (await findAccountByEmail(db, 'ada@ops.example'))!
      for (const table of ['totp_factors', 'recovery_codes', 'sessions'] as const)
        expect(await db.selectFrom(table).selectAll().where('account_id', '=', account.id).execute(), table).toEqual([])
      const rows = await db
        .selectFrom('audit_log')
        .select(['actor', 'action'])
        .where('action', 'in', ['operator.reset-2fa', 'second_factor.totp_removed'])
        .orderBy('id')
        .execute()
      expect(rows).toEqual([
        { actor: 'cli:lost-phone-desk', action: 'second_factor.totp_removed' },
        { actor: 'cli:lost-phone-desk', action: 'operator.reset-2fa' },
      ])
    })
    const again = jsonOf(await cli(['operator', 'reset-2fa', '--email', 'ada@ops.example', '--json'], { databaseUrl }))
    expect(again).toMatchObject({ factorRemoved: false, sessionsEnded: 0 })

    const nobody = await cli(['operator', 'reset-2fa', '--email', 'nobody@ops.example', '--json'], { databaseUrl })
    expect(nobody.status).toBe(1)
    expect(jsonOf(nobody).error.message).toContain('there is no operator account with the address nobody@ops.example')
  })
})
