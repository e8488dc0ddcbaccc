/**
 * Several operators with two roles, on each engine: migration 0023 makes existing operators
 * admins; an admin invites an address by a mailed link (7 days, once, that address only, never an
 * address with an account), changes roles and removes operators (their sessions end at once); the
 * CLI's reset of a second factor ends the sessions too; every change is audited. The last admin can
 * neither be demoted nor removed, also when admins act at the same moment.
 */
import { type Kysely, sql } from 'kysely'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createOperator, startSession } from '../../src/cases/accounts.js'
import {
  acceptOperatorInvitation,
  changeOperatorRole,
  inviteOperator,
  MAX_PENDING_OPERATOR_INVITATIONS,
  OPERATOR_INVITATION_LIFETIME_MS,
  type OperatorActor,
  OperatorRefused,
  type OperatorRefusal,
  removeOperator,
  resetOperatorSecondFactor,
  revokeOperatorInvitation,
} from '../../src/cases/operators.js'
import {
  beginTotpEnrolment,
  confirmTotpEnrolment,
  hasSecondFactor,
  secondFactorKey,
} from '../../src/cases/second-factor.js'
import { NotFoundError } from '../../src/domain/errors.js'
import { accountForSession, createAccount, findAccount } from '../../src/storage/account-repository.js'
import { listAudit } from '../../src/storage/audit-repository.js'
import type { Storage } from '../../src/storage/connection.js'
import { findMail } from '../../src/storage/mail-outbox-repository.js'
import { listOperators, pendingOperatorInvitations } from '../../src/storage/operator-repository.js'
import { knownMigrations } from '../../src/storage/migrate.js'
import { createTestStorage, migrateBesideOtherTests, openTestStorage } from '../helper.js'
import { codeAtStep } from '../support/authenticator.js'

const T0 = Date.parse('2026-03-02T09:00:00.000Z')
const PUBLIC_URL = 'https://curriculum.example.org'
const ORIGIN = { address: '192.0.2.9', userAgent: null }
/** How many times each race is run: enough for the transactions to overlap on PostgreSQL. */
const RACES = 8

async function refusal(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => {
      throw new Error(`expected a refusal, got ${JSON.stringify(value)}`)
    },
    (error: unknown) => error,
  )
}

async function refusedAs(promise: Promise<unknown>, reason: OperatorRefusal, detail?: string): Promise<void> {
  const error = await refusal(promise)
  expect(error).toBeInstanceOf(OperatorRefused)
  expect((error as OperatorRefused).reason).toBe(reason)
  if (detail !== undefined) expect((error as OperatorRefused).detail).toBe(detail)
}

describe('operators and their roles', () => {
  let storage: Storage
  let ada: OperatorActor
  const options = { publicUrl: PUBLIC_URL }

  beforeEach(async () => {
    storage = await createTestStorage({ catalog: false })
    const row = await createOperator(storage.db, { email: 'ada@ops.example', passwordHash: 'x' }, T0)
    ada = { id: row.id, email: row.email }
  })
  afterEach(() => storage.close())

  const invite = (email: string, role: string, by = ada, at = T0) =>
    inviteOperator(storage.db, { email, role }, by, at, options)
  const tokenOf = async (mailId: number) => {
    const mail = await findMail(storage.db, mailId)
    const token = /\/dashboard\/invitations\/operator\?token=([\w-]+)/.exec(mail!.text_body)?.[1]
    expect(token).toMatch(/^[\w-]{43}$/)
    return token!
  }
  /** An operator with `role`, joined through an invitation. */
  const joined = async (email: string, role: 'admin' | 'operator'): Promise<OperatorActor> => {
    const sent = await invite(email, role)
    const account = await acceptOperatorInvitation(storage.db, await tokenOf(sent.mailId), 'hash', T0)
    return { id: account.id, email: account.email }
  }
  const roles = async () => (await listOperators(storage.db)).map((o) => `${o.email}:${o.role}`).sort()

  it('makes the CLI’s operator an admin, and a partner no operator', async () => {
    expect((await findAccount(storage.db, ada.id))!.operator_role).toBe('admin')
    const partner = await createAccount(storage.db, { email: 'p@acme.example', passwordHash: 'x', role: 'partner' }, T0)
    expect(partner.operator_role).toBeNull()
    expect(await roles()).toEqual(['ada@ops.example:admin'])
  })

  it('made every operator that existed an admin (migration 0023), on this engine', async () => {
    const old = openTestStorage()
    try {
      const known = knownMigrations()
      await migrateBesideOtherTests(old, known[known.indexOf('0023-operator-roles') - 1]!)
      const account = (id: string, email: string, role: string) => ({
        id,
        email,
        password_hash: 'x',
        role,
        organisation_id: null,
        sandbox_organisation_id: null,
        created_at: new Date(T0).toISOString(),
      })
      const db = old.db as unknown as Kysely<Record<string, Record<string, unknown>>>
      await db
        .insertInto('accounts')
        .values([account('a1', 'one@ops.example', 'operator'), account('a2', 'p@acme.example', 'partner')])
        .execute()
      await migrateBesideOtherTests(old)
      const rows = await old.db.selectFrom('accounts').select(['email', 'operator_role']).orderBy('email').execute()
      expect(rows).toEqual([
        { email: 'one@ops.example', operator_role: 'admin' },
        { email: 'p@acme.example', operator_role: null },
      ])
      await expect(sql`update accounts set operator_role = 'root' where id = 'a1'`.execute(old.db)).rejects.toThrow()
    } finally {
      await old.close()
    }
  })

  it('invites by a mailed link that makes an operator of that address, verified, with the role', async () => {
    const sent = await invite('Bo@Ops.Example ', 'operator')
    expect(sent).toMatchObject({ email: 'bo@ops.example', role: 'operator', replaced: [] })
    expect(sent.expiresAt).toBe(new Date(T0 + OPERATOR_INVITATION_LIFETIME_MS).toISOString())
    const mail = (await findMail(storage.db, sent.mailId))!
    expect(mail).toMatchObject({ recipient: 'bo@ops.example', kind: 'invitation' })
    expect(mail.text_body).toContain('ada@ops.example invites you to run the Curriculum API as operator')
    const token = await tokenOf(sent.mailId)
    const stored = await storage.db.selectFrom('operator_invitations').selectAll().executeTakeFirstOrThrow()
    expect(JSON.stringify(stored)).not.toContain(token)
    const account = await acceptOperatorInvitation(storage.db, token, 'hash', T0 + 1000)
    expect(account).toMatchObject({ email: 'bo@ops.example', role: 'operator', operator_role: 'operator' })
    expect(account.email_verified_at).not.toBeNull()
    expect(await roles()).toEqual(['ada@ops.example:admin', 'bo@ops.example:operator'])
    const actions = (await listAudit(storage.db)).map((row) => `${row.actor} ${row.action}`)
    expect(actions).toEqual(
      expect.arrayContaining(['account:ada@ops.example operator.invite', 'account:bo@ops.example operator.join']),
    )
  })

  it('refuses a link expired, reused, revoked or replaced, and one that is not ours', async () => {
    const expired = await invite('c@ops.example', 'operator')
    await refusedAs(
      acceptOperatorInvitation(storage.db, await tokenOf(expired.mailId), 'h', T0 + OPERATOR_INVITATION_LIFETIME_MS),
      'link',
      'expired',
    )
    const once = await tokenOf((await invite('d@ops.example', 'operator')).mailId)
    await acceptOperatorInvitation(storage.db, once, 'h', T0)
    await refusedAs(acceptOperatorInvitation(storage.db, once, 'h', T0), 'link', 'used')
    const first = await invite('e@ops.example', 'admin')
    const second = await invite('e@ops.example', 'operator')
    expect(second.replaced).toEqual([first.id])
    await refusedAs(acceptOperatorInvitation(storage.db, await tokenOf(first.mailId), 'h', T0), 'link', 'revoked')
    await revokeOperatorInvitation(storage.db, second.id, ada, T0)
    await refusedAs(acceptOperatorInvitation(storage.db, await tokenOf(second.mailId), 'h', T0), 'link', 'revoked')
    await refusedAs(revokeOperatorInvitation(storage.db, second.id, ada, T0), 'not-pending')
    await refusedAs(acceptOperatorInvitation(storage.db, 'A'.repeat(43), 'h', T0), 'link', 'unknown')
    expect(await roles()).toEqual(['ada@ops.example:admin', 'd@ops.example:operator'])
  })

  it('works for its address only: an address with an account is refused, at invitation and at acceptance', async () => {
    await createAccount(storage.db, { email: 'p@acme.example', passwordHash: 'x', role: 'partner' }, T0)
    await refusedAs(invite('p@acme.example', 'operator'), 'already-account')
    await refusedAs(invite('ada@ops.example', 'admin'), 'already-account')
    // The address signed up as a partner after the invitation was sent.
    const sent = await invite('late@acme.example', 'admin')
    await createAccount(storage.db, { email: 'late@acme.example', passwordHash: 'x', role: 'partner' }, T0)
    await refusedAs(acceptOperatorInvitation(storage.db, await tokenOf(sent.mailId), 'h', T0), 'already-account')
    expect((await findAccount(storage.db, (await invite('x@ops.example', 'operator')).id)) ?? null).toBeNull()
    await refusedAs(invite('not an address', 'operator'), 'bad-input')
    await refusedAs(invite('y@ops.example', 'root'), 'bad-input')
  })

  it('lets admins only manage operators, and caps pending invitations', async () => {
    const bo = await joined('bo@ops.example', 'operator')
    await refusedAs(invite('z@ops.example', 'operator', bo), 'not-admin')
    await refusedAs(changeOperatorRole(storage.db, bo.id, 'admin', bo, T0), 'not-admin')
    await refusedAs(removeOperator(storage.db, ada.id, bo, T0), 'not-admin')
    await expect(changeOperatorRole(storage.db, 'no-such-id', 'admin', ada, T0)).rejects.toBeInstanceOf(NotFoundError)
    for (let n = 0; n < MAX_PENDING_OPERATOR_INVITATIONS; n++) await invite(`n${n}@ops.example`, 'operator')
    await refusedAs(invite('one-more@ops.example', 'operator'), 'too-many-invitations')
    expect(await pendingOperatorInvitations(storage.db, T0)).toHaveLength(MAX_PENDING_OPERATOR_INVITATIONS)
  })

  it('changes roles and removes operators, whose sessions end at once; keeps the last admin', async () => {
    const bo = await joined('bo@ops.example', 'operator')
    expect(await changeOperatorRole(storage.db, bo.id, 'admin', ada, T0)).toBe(true)
    expect(await changeOperatorRole(storage.db, bo.id, 'admin', ada, T0)).toBe(false)
    expect(await changeOperatorRole(storage.db, ada.id, 'operator', ada, T0)).toBe(true)
    await refusedAs(changeOperatorRole(storage.db, bo.id, 'operator', bo, T0), 'last-admin')
    await refusedAs(removeOperator(storage.db, bo.id, bo, T0), 'last-admin')
    const { token } = await startSession(storage.db, ada.id, ORIGIN, T0, 3_600_000)
    const key = await secondFactorKey(storage.db)
    await beginTotpEnrolment({ db: storage.db, key }, ada, T0)
    const removed = await removeOperator(storage.db, ada.id, bo, T0)
    expect(removed).toEqual({ email: 'ada@ops.example', role: 'operator', sessionsEnded: 1 })
    expect(await accountForSession(storage.db, token, T0)).toBeUndefined()
    expect(await findAccount(storage.db, ada.id)).toBeUndefined()
    expect(await roles()).toEqual(['bo@ops.example:admin'])
    const audit = (await listAudit(storage.db)).map((row) => `${row.actor} ${row.action}`)
    expect(audit).toEqual(
      expect.arrayContaining(['account:ada@ops.example operator.role', 'account:bo@ops.example operator.remove']),
    )
  })

  it('clears every table that references an account when it removes one', async () => {
    const referencing =
      storage.engine === 'postgres'
        ? (
            await sql<{ table: string }>`select distinct cl.relname as table from pg_constraint c
              join pg_class cl on cl.oid = c.conrelid join pg_class r on r.oid = c.confrelid
              where c.contype = 'f' and r.relname = 'accounts' and cl.relnamespace = r.relnamespace
                and r.relnamespace = current_schema()::regnamespace`.execute(storage.db)
          ).rows.map((row) => row.table)
        : (
            await sql<{
              table: string
            }>`select m.name as "table" from sqlite_master m, pragma_foreign_key_list(m.name) f
              where m.type = 'table' and f."table" = 'accounts'`.execute(storage.db)
          ).rows.map((row) => row.table)
    // Those an operator can have rows in are cleared by deleteOperatorAccount; the others are a partner's.
    expect([...new Set(referencing)].sort()).toEqual(
      [
        'account_links',
        'applications',
        'deletion_attestations',
        'invitations',
        'key_views',
        'known_devices',
        'memberships',
        'notice_opt_outs',
        'passkeys',
        'recovery_codes',
        'second_factor_guesses',
        'sessions',
        'totp_factors',
      ].sort(),
    )
  })

  it('resets a lost second factor for the CLI: factor, codes and sessions gone, audited as cli:<user>', async () => {
    const key = await secondFactorKey(storage.db)
    const { secret } = await beginTotpEnrolment({ db: storage.db, key }, ada, T0)
    const confirmed = await confirmTotpEnrolment(
      { db: storage.db, key },
      ada,
      codeAtStep(secret, Math.floor(T0 / 30_000)),
      T0,
    )
    expect(confirmed).not.toBeUndefined()
    expect(await hasSecondFactor(storage.db, ada.id)).toBe(true)
    const { token } = await startSession(storage.db, ada.id, ORIGIN, T0, 3_600_000)
    const reset = await resetOperatorSecondFactor(storage.db, 'ADA@ops.example', { actor: 'cli:root' }, T0)
    expect(reset).toMatchObject({ removed: true, sessionsEnded: 1 })
    expect(await hasSecondFactor(storage.db, ada.id)).toBe(false)
    expect(await accountForSession(storage.db, token, T0)).toBeUndefined()
    const codes = await storage.db.selectFrom('recovery_codes').where('account_id', '=', ada.id).selectAll().execute()
    expect(codes).toEqual([])
    const row = (await listAudit(storage.db)).find((entry) => entry.action === 'second_factor.totp_removed')
    expect(row?.actor).toBe('cli:root')
    expect(await resetOperatorSecondFactor(storage.db, ada.email, { actor: 'cli:root' }, T0)).toMatchObject({
      removed: false,
      sessionsEnded: 0,
    })
    await createAccount(storage.db, { email: 'p@acme.example', passwordHash: 'x', role: 'partner' }, T0)
    for (const email of ['p@acme.example', 'nobody@ops.example'])
      await expect(resetOperatorSecondFactor(storage.db, email, { actor: 'cli:root' }, T0)).rejects.toBeInstanceOf(
        NotFoundError,
      )
  })

  describe('at the same moment', () => {
    const outcomes = async (changes: Promise<unknown>[]) => {
      const settled = await Promise.allSettled(changes)
      return {
        done: settled.filter((s) => s.status === 'fulfilled').length,
        refused: settled
          .flatMap((s) => (s.status === 'rejected' ? [(s.reason as OperatorRefused).reason ?? String(s.reason)] : []))
          .sort(),
      }
    }
    const admins = async () => (await listOperators(storage.db)).filter((o) => o.role === 'admin').map((o) => o.id)

    it('keeps an admin when two admins demote each other, step down, or remove each other', async () => {
      for (let n = 0; n < RACES; n++) {
        const bo = await joined(`bo${n}@ops.example`, 'admin')
        const kind = n % 3
        const result = await outcomes(
          kind === 0
            ? [
                changeOperatorRole(storage.db, bo.id, 'operator', ada, T0),
                changeOperatorRole(storage.db, ada.id, 'operator', bo, T0),
              ]
            : kind === 1
              ? [
                  changeOperatorRole(storage.db, ada.id, 'operator', ada, T0),
                  changeOperatorRole(storage.db, bo.id, 'operator', bo, T0),
                ]
              : [removeOperator(storage.db, bo.id, ada, T0), removeOperator(storage.db, ada.id, bo, T0)],
        )
        expect(result.done).toBe(1)
        expect(result.refused).toEqual([kind === 1 ? 'last-admin' : 'not-admin'])
        const left = await admins()
        expect(left).toHaveLength(1)
        // The next round starts from one admin, ada again.
        ada = { id: left[0]!, email: (await findAccount(storage.db, left[0]!))!.email }
      }
    })

    it('keeps an admin when one is removed twice and the other steps down, all at once', async () => {
      for (let n = 0; n < RACES; n++) {
        const bo = await joined(`twice${n}@ops.example`, 'admin')
        const result = await outcomes([
          removeOperator(storage.db, bo.id, ada, T0),
          removeOperator(storage.db, bo.id, ada, T0),
          changeOperatorRole(storage.db, ada.id, 'operator', ada, T0),
        ])
        expect(result.done).toBeGreaterThanOrEqual(1)
        expect(await admins()).toHaveLength(1)
        const left = (await admins())[0]!
        ada = { id: left, email: (await findAccount(storage.db, left))!.email }
      }
    })

    it('uses one invitation once when it is accepted twice at once', async () => {
      for (let n = 0; n < RACES; n++) {
        const sent = await invite(`once${n}@ops.example`, 'operator')
        const token = await tokenOf(sent.mailId)
        const result = await outcomes([
          acceptOperatorInvitation(storage.db, token, 'h', T0),
          acceptOperatorInvitation(storage.db, token, 'h', T0),
        ])
        expect(result.done).toBe(1)
        expect(result.refused).toHaveLength(1)
      }
    })
  })
})
