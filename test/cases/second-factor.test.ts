/**
 * The second factor's rules on each engine: an authenticator takes effect only once a code from
 * it is confirmed, and enrolling again replaces a pending one, never a confirmed one; a code is
 * accepted once (a replay in its step or an earlier one fails); recovery codes are shown once,
 * stored as keyed hashes and work once; guesses are limited per account; every change is audited.
 * The races: the same code, the same recovery code, a confirmation, and guesses past the limit,
 * each sent at once, pass exactly as often as they would one after another.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createOperator } from '../../src/cases/accounts.js'
import {
  beginTotpEnrolment,
  confirmTotpEnrolment,
  type FactorAccount,
  GUESS_LIMIT,
  GUESS_WINDOW_MS,
  hasSecondFactor,
  pendingTotpEnrolment,
  regenerateRecoveryCodes,
  removeTotp,
  type SecondFactorStore,
  secondFactorKey,
  secondFactorStatus,
  useRecoveryCode,
  verifyTotpCode,
} from '../../src/cases/second-factor.js'
import { ConflictError, NotFoundError } from '../../src/domain/errors.js'
import { totpCode, totpStep } from '../../src/domain/totp.js'
import type { Storage } from '../../src/storage/connection.js'
import {
  advanceTotpStep,
  reserveGuess,
  useRecoveryCode as markUsed,
} from '../../src/storage/second-factor-repository.js'
import { createTestStorage } from '../helper.js'

/** Ten seconds into a 30-second step, so that a step's codes are not at its edge. */
const T0 = Date.parse('2026-03-02T09:00:10.000Z')
const STEP = 30_000
const code = (secret: string, at: number) => totpCode(secret, totpStep(at))
/** A six-digit code that is none of the window's right ones at `at`. */
function wrongCode(secret: string, at: number): string {
  const right = new Set([-1, 0, 1].map((delta) => totpCode(secret, totpStep(at) + delta)))
  for (let n = 0; ; n++) {
    const candidate = String(n).padStart(6, '0')
    if (!right.has(candidate)) return candidate
  }
}

describe('the second factor', () => {
  let storage: Storage
  let store: SecondFactorStore
  let dana: FactorAccount
  beforeEach(async () => {
    storage = await createTestStorage({ catalog: false })
    store = { db: storage.db, key: await secondFactorKey(storage.db) }
    dana = await createOperator(storage.db, { email: 'dana@district.example', passwordHash: 'x' }, T0)
  })
  afterEach(() => storage.close())

  const audits = async () =>
    (
      await storage.db.selectFrom('audit_log').select(['actor', 'action', 'target', 'detail']).orderBy('id').execute()
    ).map((row) => ({ ...row, detail: JSON.parse(row.detail) as Record<string, unknown> }))

  /** Dana's confirmed authenticator: its secret and recovery codes, confirmed at T0. */
  async function enrolled(): Promise<{ secret: string; recoveryCodes: string[] }> {
    const { secret } = await beginTotpEnrolment(store, dana, T0)
    const confirmed = await confirmTotpEnrolment(store, dana, code(secret, T0), T0)
    if (!confirmed.ok) throw new Error('the enrolment was not confirmed')
    return { secret, recoveryCodes: confirmed.recoveryCodes }
  }

  it('takes effect only once a code from the authenticator is confirmed', async () => {
    const first = await beginTotpEnrolment(store, dana, T0)
    expect(first.uri).toContain(`secret=${first.secret}`)
    expect(await hasSecondFactor(storage.db, dana.id)).toBe(false)
    expect(await verifyTotpCode(store, dana, code(first.secret, T0), T0)).toEqual({ ok: false, reason: 'not_enrolled' })
    expect(await pendingTotpEnrolment(store, dana)).toEqual(first)

    // Beginning again replaces the pending secret: a code of the first no longer confirms.
    const second = await beginTotpEnrolment(store, dana, T0 + 1000)
    expect(second.secret).not.toBe(first.secret)
    expect(await confirmTotpEnrolment(store, dana, code(first.secret, T0), T0 + 2000)).toEqual({
      ok: false,
      reason: 'wrong',
    })
    expect((await secondFactorStatus(storage.db, dana.id, T0)).totp).toBe('pending')

    const confirmed = await confirmTotpEnrolment(store, dana, code(second.secret, T0), T0 + 3000)
    expect(confirmed.ok).toBe(true)
    expect(await hasSecondFactor(storage.db, dana.id)).toBe(true)
    expect(await pendingTotpEnrolment(store, dana)).toBeUndefined()
    expect(await secondFactorStatus(storage.db, dana.id, T0 + 3000)).toEqual({
      totp: 'confirmed',
      confirmedAt: new Date(T0 + 3000).toISOString(),
      recoveryCodesLeft: 10,
      lockedUntil: null,
    })

    // A confirmed authenticator is neither replaced nor confirmed again.
    await expect(beginTotpEnrolment(store, dana, T0 + STEP)).rejects.toBeInstanceOf(ConflictError)
    await expect(confirmTotpEnrolment(store, dana, code(second.secret, T0 + STEP), T0 + STEP)).rejects.toBeInstanceOf(
      ConflictError,
    )
    expect(await pendingTotpEnrolment(store, dana)).toBeUndefined()

    const someoneElse = await createOperator(storage.db, { email: 'sam@district.example', passwordHash: 'x' }, T0)
    await expect(confirmTotpEnrolment(store, someoneElse, '123456', T0)).rejects.toBeInstanceOf(NotFoundError)

    const actor = 'account:dana@district.example'
    const target = `account:${dana.id}`
    expect(await audits()).toEqual([
      { actor, action: 'second_factor.totp_begun', target, detail: { replaced: false } },
      { actor, action: 'second_factor.totp_begun', target, detail: { replaced: true } },
      { actor, action: 'second_factor.totp_confirmed', target, detail: { recovery_codes: 10 } },
    ])
  })

  it('keeps the secret sealed and only keyed hashes of the recovery codes', async () => {
    const { secret, recoveryCodes } = await enrolled()
    const row = await storage.db.selectFrom('totp_factors').selectAll().executeTakeFirstOrThrow()
    expect(row.secret).toMatch(/^v1\./)
    expect(row.secret).not.toContain(secret)
    const hashes = await storage.db.selectFrom('recovery_codes').select('code_hash').execute()
    expect(hashes).toHaveLength(10)
    for (const { code_hash } of hashes) {
      expect(code_hash).toMatch(/^[0-9a-f]{64}$/)
      for (const recovery of recoveryCodes) expect(code_hash).not.toContain(recovery.replace('-', ''))
    }
    // Another master key (say, another database's) opens nothing.
    const other = { db: storage.db, key: Buffer.alloc(32, 9) }
    await expect(verifyTotpCode(other, dana, code(secret, T0 + STEP), T0 + STEP)).rejects.toThrow(/does not open/)
    expect((await useRecoveryCode(other, dana, recoveryCodes[0]!, T0)).ok).toBe(false)
  })

  it('accepts a code once: a replay in its step or an earlier one fails', async () => {
    const { secret } = await enrolled()
    // The confirming code was used at T0.
    expect(await verifyTotpCode(store, dana, code(secret, T0), T0 + 5000)).toMatchObject({
      ok: false,
      reason: 'replayed',
    })
    const next = T0 + STEP
    expect(await verifyTotpCode(store, dana, code(secret, next), next)).toEqual({ ok: true })
    expect(await verifyTotpCode(store, dana, code(secret, next), next + 1000)).toMatchObject({ reason: 'replayed' })
    // The previous step's code is still in the window, but earlier than the one used.
    expect(await verifyTotpCode(store, dana, code(secret, T0), next)).toMatchObject({ reason: 'replayed' })
    // One step ahead (a clock 30 s fast) passes; two steps ahead does not.
    expect(await verifyTotpCode(store, dana, code(secret, next + 2 * STEP), next + 2 * STEP - STEP)).toEqual({
      ok: true,
    })
    const later = next + 10 * STEP
    expect(await verifyTotpCode(store, dana, code(secret, later + 2 * STEP), later)).toMatchObject({ reason: 'wrong' })
    expect(await verifyTotpCode(store, dana, ` ${code(secret, later)} `, later)).toEqual({ ok: true })
    const actions = (await audits()).map((row) => row.action)
    expect(actions.filter((action) => action === 'second_factor.totp_verified')).toHaveLength(3)
    expect(actions.filter((action) => action === 'second_factor.code_refused')).toHaveLength(4)
  })

  it('lets each recovery code work once, typed in any case with spaces', async () => {
    const { recoveryCodes } = await enrolled()
    const [first, second] = recoveryCodes as [string, string]
    expect(await useRecoveryCode(store, dana, first, T0)).toEqual({ ok: true, codesLeft: 9 })
    expect(await useRecoveryCode(store, dana, first, T0)).toMatchObject({ ok: false, reason: 'wrong' })
    const typed = ` ${second.toUpperCase().replace('-', ' ')} `
    expect(await useRecoveryCode(store, dana, typed, T0)).toEqual({ ok: true, codesLeft: 8 })
    expect(await useRecoveryCode(store, dana, 'not a code', T0)).toMatchObject({ ok: false, reason: 'wrong' })
    expect((await audits()).filter((row) => row.action === 'second_factor.recovery_code_used')).toEqual([
      expect.objectContaining({ detail: { codes_left: 9 } }),
      expect.objectContaining({ detail: { codes_left: 8 } }),
    ])
  })

  it('regenerates recovery codes, and removes the authenticator with its codes', async () => {
    const { recoveryCodes: old, secret } = await enrolled()
    await useRecoveryCode(store, dana, old[0]!, T0)
    const fresh = await regenerateRecoveryCodes(store, dana, T0 + 1000)
    expect(fresh).toHaveLength(10)
    expect(fresh.some((code) => old.includes(code))).toBe(false)
    expect(await useRecoveryCode(store, dana, old[1]!, T0 + 2000)).toMatchObject({ ok: false, reason: 'wrong' })
    expect(await useRecoveryCode(store, dana, fresh[0]!, T0 + 2000)).toEqual({ ok: true, codesLeft: 9 })

    expect(await removeTotp(storage.db, dana, T0 + 3000, { actor: 'cli:root' })).toBe(true)
    expect(await removeTotp(storage.db, dana, T0 + 3000)).toBe(false)
    expect(await hasSecondFactor(storage.db, dana.id)).toBe(false)
    expect(await storage.db.selectFrom('recovery_codes').selectAll().execute()).toEqual([])
    expect(await verifyTotpCode(store, dana, code(secret, T0 + STEP), T0 + STEP)).toEqual({
      ok: false,
      reason: 'not_enrolled',
    })
    expect(await useRecoveryCode(store, dana, fresh[1]!, T0 + STEP)).toEqual({ ok: false, reason: 'not_enrolled' })
    await expect(regenerateRecoveryCodes(store, dana, T0 + STEP)).rejects.toBeInstanceOf(ConflictError)
    // Enrolling again is possible once removed.
    expect((await beginTotpEnrolment(store, dana, T0 + STEP)).secret).not.toBe(secret)

    const rows = await audits()
    expect(rows.find((row) => row.action === 'second_factor.recovery_codes_regenerated')).toMatchObject({
      actor: 'account:dana@district.example',
      detail: { recovery_codes: 10 },
    })
    expect(rows.filter((row) => row.action === 'second_factor.totp_removed')).toEqual([
      {
        actor: 'cli:root',
        action: 'second_factor.totp_removed',
        target: `account:${dana.id}`,
        detail: { confirmed: true, recovery_codes_removed: 10 },
      },
    ])
  })

  it(`refuses every code for ${GUESS_WINDOW_MS / 60_000} minutes after ${GUESS_LIMIT} wrong ones`, async () => {
    const { secret, recoveryCodes } = await enrolled()
    const at = T0 + STEP
    const results = []
    for (let i = 0; i < GUESS_LIMIT; i++) results.push(await verifyTotpCode(store, dana, wrongCode(secret, at), at + i))
    const lockedUntil = at + GUESS_WINDOW_MS
    expect(results.map((result) => (result.ok ? 'ok' : result.reason))).toEqual(Array(GUESS_LIMIT).fill('wrong'))
    expect(results.at(-2)).toEqual({ ok: false, reason: 'wrong', attemptsLeft: 1, lockedUntil: null })
    expect(results.at(-1)).toEqual({ ok: false, reason: 'wrong', attemptsLeft: 0, lockedUntil })

    // Right codes, and recovery codes, are refused too until the window ends.
    expect(await verifyTotpCode(store, dana, code(secret, at), at + 10)).toEqual({
      ok: false,
      reason: 'locked',
      lockedUntil,
    })
    expect(await useRecoveryCode(store, dana, recoveryCodes[0]!, at + 10)).toEqual({
      ok: false,
      reason: 'locked',
      lockedUntil,
    })
    expect((await secondFactorStatus(storage.db, dana.id, at + 10)).lockedUntil).toBe(lockedUntil)
    expect((await secondFactorStatus(storage.db, dana.id, lockedUntil)).lockedUntil).toBeNull()

    // A new window starts with the first code after it.
    expect(await verifyTotpCode(store, dana, code(secret, lockedUntil), lockedUntil)).toEqual({ ok: true })
    const refused = (await audits()).filter((row) => row.action === 'second_factor.code_refused')
    expect(refused.map((row) => row.detail.failures)).toEqual([1, 2, 3, 4, 5])
    expect(refused.at(-1)!.detail).toEqual({ kind: 'totp', reason: 'wrong', failures: 5, locked: true })
  })

  it('counts only refused codes: a right one between wrong ones is taken back', async () => {
    const { secret } = await enrolled()
    let at = T0 + STEP
    for (let i = 0; i < GUESS_LIMIT - 1; i++) await verifyTotpCode(store, dana, wrongCode(secret, at), at)
    expect(await verifyTotpCode(store, dana, code(secret, at), at)).toEqual({ ok: true })
    at += STEP
    expect(await verifyTotpCode(store, dana, wrongCode(secret, at), at)).toMatchObject({ attemptsLeft: 0 })
    expect(await verifyTotpCode(store, dana, code(secret, at), at)).toMatchObject({ reason: 'locked' })
  })

  describe('at once', () => {
    it('accepts the same code sent twice (and five times) at once exactly once', async () => {
      const { secret } = await enrolled()
      for (const [n, at] of [
        [2, T0 + STEP],
        [5, T0 + 2 * STEP],
      ] as const) {
        const results = await Promise.all(
          Array.from({ length: n }, () => verifyTotpCode(store, dana, code(secret, at), at)),
        )
        expect(results.filter((result) => result.ok)).toHaveLength(1)
        expect(results.filter((result) => !result.ok && result.reason === 'replayed')).toHaveLength(n - 1)
      }
      const row = await storage.db.selectFrom('totp_factors').select('last_used_step').executeTakeFirstOrThrow()
      expect(Number(row.last_used_step)).toBe(totpStep(T0 + 2 * STEP))
    })

    it('accepts the same recovery code used five times at once exactly once', async () => {
      const { recoveryCodes } = await enrolled()
      const results = await Promise.all(
        Array.from({ length: 5 }, () => useRecoveryCode(store, dana, recoveryCodes[3]!, T0)),
      )
      expect(results.filter((result) => result.ok)).toEqual([{ ok: true, codesLeft: 9 }])
      expect(
        await storage.db.selectFrom('recovery_codes').where('used_at', 'is not', null).selectAll().execute(),
      ).toHaveLength(1)
    })

    it(`checks only ${GUESS_LIMIT} of 12 wrong codes sent at once, and refuses the rest unchecked`, async () => {
      const { secret } = await enrolled()
      const at = T0 + STEP
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, i) => verifyTotpCode(store, dana, wrongCode(secret, at), at + i)),
      )
      const reasons = results.map((result) => (result.ok ? 'ok' : result.reason))
      expect(reasons.filter((reason) => reason === 'wrong')).toHaveLength(GUESS_LIMIT)
      expect(reasons.filter((reason) => reason === 'locked')).toHaveLength(12 - GUESS_LIMIT)
      expect((await audits()).filter((row) => row.action === 'second_factor.code_refused')).toHaveLength(GUESS_LIMIT)
      const count = await storage.db.selectFrom('second_factor_guesses').select('failures').executeTakeFirstOrThrow()
      expect(Number(count.failures)).toBe(GUESS_LIMIT)
    })

    it('lets one of two conditional writes win on its own, without the count that serialises the checks', async () => {
      await enrolled()
      const step = totpStep(T0 + STEP)
      const advanced = await Promise.all([0, 1, 2].map(() => advanceTotpStep(storage.db, dana.id, step)))
      expect(advanced.filter(Boolean)).toHaveLength(1)
      expect(await advanceTotpStep(storage.db, dana.id, step - 1)).toBe(false)
      const { code_hash } = await storage.db.selectFrom('recovery_codes').select('code_hash').executeTakeFirstOrThrow()
      const used = await Promise.all([0, 1, 2].map(() => markUsed(storage.db, dana.id, code_hash, T0)))
      expect(used.filter(Boolean)).toHaveLength(1)
      const limit = { limit: 2, windowMs: GUESS_WINDOW_MS }
      const reserved = await Promise.all([0, 1, 2, 3].map(() => reserveGuess(storage.db, dana.id, T0, limit)))
      expect(
        reserved
          .filter((window) => window !== undefined)
          .map((window) => window!.failures)
          .sort(),
      ).toEqual([1, 2])
    })

    it('confirms an enrolment sent twice at once once, returning the recovery codes once', async () => {
      const { secret } = await beginTotpEnrolment(store, dana, T0)
      const settled = await Promise.allSettled(
        [0, 1].map(() => confirmTotpEnrolment(store, dana, code(secret, T0), T0)),
      )
      const fulfilled = settled.filter((result) => result.status === 'fulfilled')
      expect(fulfilled).toHaveLength(1)
      expect(fulfilled[0]!.value).toMatchObject({ ok: true, recoveryCodes: expect.any(Array) })
      const rejected = settled.filter((result) => result.status === 'rejected')
      expect(rejected.map((result) => result.reason)).toEqual([expect.any(ConflictError)])
      expect(await storage.db.selectFrom('recovery_codes').selectAll().execute()).toHaveLength(10)
    })
  })
})
