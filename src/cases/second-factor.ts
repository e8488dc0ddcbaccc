/**
 * The second factor's rules (docs/security.md, "Second factor"): a TOTP authenticator (RFC 6238)
 * and ten one-time recovery codes.
 *
 * - Enrolment stores a pending secret (beginning again replaces a pending one, never a confirmed
 *   one); it takes effect only when a code from it is confirmed, which returns the recovery codes
 *   in clear that one time. Only keyed hashes of them are stored.
 * - A code is accepted once: its time step is recorded, and a code of that step or an earlier one
 *   fails, by a conditional update, so two requests with the same code cannot both pass.
 * - Guesses are limited per account: GUESS_LIMIT refused codes (TOTP and recovery codes together)
 *   in a window of GUESS_WINDOW_MS, then every code is refused, right or not, until the window
 *   ends. Each code is counted before it is checked, in the same transaction that reports the
 *   outcome, so concurrent guesses cannot get past the count and no outcome is known uncounted.
 * - Every change writes its audit row in its transaction, as `account:<email>` (or whoever `by`
 *   names: the CLI resetting an operator's factor).
 *
 * The TOTP secret is sealed at rest (domain/sealed-secret.ts) and recovery codes are hashed under
 * a master key the instances share (`secondFactorKey`: a random secret in the settings table). A
 * copy of the factor tables alone, or a row in a log or an export, gives neither; a copy of the
 * whole database, settings included, gives the secrets, as it gives everything else in it.
 */
import type { Kysely } from 'kysely'
import { countPasskeys } from '../storage/passkey-repository.js'
import { ConflictError, NotFoundError } from '../domain/errors.js'
import { openSecret, purposeKey, sealSecret } from '../domain/sealed-secret.js'
import {
  newRecoveryCodes,
  newTotpSecret,
  normaliseRecoveryCode,
  RECOVERY_CODE_COUNT,
  recoveryCodeHash,
  totpUri,
  verifyTotp,
} from '../domain/totp.js'
import {
  advanceTotpStep,
  confirmPendingTotp,
  countUnusedRecoveryCodes,
  deleteGuesses,
  deleteRecoveryCodes,
  deleteTotpFactor,
  findGuessWindow,
  findTotpFactor,
  type GuessLimit,
  putPendingTotp,
  releaseGuess,
  replaceRecoveryCodes,
  reserveGuess,
  useRecoveryCode as markRecoveryCodeUsed,
} from '../storage/second-factor-repository.js'
import type { AccountRow, Database, TotpFactorRow } from '../storage/tables.js'
import { inTransaction } from '../storage/transaction.js'
import { announceNotices, type NoticeContext, type QueuedNotice, queueSecondFactorNotice } from './notices.js'
import { auditOperator, type OperatorAudit } from './operator-action.js'
import { sharedSecret } from './shared-settings.js'

/** Refused codes an account may have in one window before every code is refused. */
export const GUESS_LIMIT = 5
/** The window's length from its first counted code: 5 per 15 minutes is at most 480 guesses a day. */
export const GUESS_WINDOW_MS = 15 * 60_000
const LIMIT: GuessLimit = { limit: GUESS_LIMIT, windowMs: GUESS_WINDOW_MS }

/** What the rules need of an account. */
export type FactorAccount = Pick<AccountRow, 'id' | 'email'>

/** Where the factors are and the master key that seals their secrets. */
export interface SecondFactorStore {
  db: Kysely<Database>
  /** From `secondFactorKey`, or any 32 random bytes the instances share. */
  key: Buffer
}

/** The master key of second factors, the same for every instance sharing the database. */
export function secondFactorKey(db: Kysely<Database>): Promise<Buffer> {
  return sharedSecret(db, 'second-factor-key')
}

/** What an enrolment shows: the secret (typed by hand) and the URI (its QR code). */
export interface TotpEnrolment {
  secret: string
  uri: string
}

/** The outcome of a sign-in code or a recovery code. */
export type CodeCheck =
  | { ok: true }
  /** A wrong code, or one already used (`replayed`), counted: `lockedUntil` when it reached the limit. */
  | { ok: false; reason: 'wrong' | 'replayed'; attemptsLeft: number; lockedUntil: number | null }
  /** Not checked: the limit was reached; no code is accepted before `lockedUntil`. */
  | { ok: false; reason: 'locked'; lockedUntil: number }
  /** Not checked: the account has no confirmed second factor. */
  | { ok: false; reason: 'not_enrolled' }

/** A recovery code's outcome: when right, how many unused codes are left. */
export type RecoveryCheck = Exclude<CodeCheck, { ok: true }> | { ok: true; codesLeft: number }

/** The sealed secret's binding to its row: a secret copied to another account's row does not open. */
const totpContext = (accountId: string) => `totp:${accountId}`
const totpKey = (store: SecondFactorStore) => purposeKey(store.key, 'totp-secret')
const recoveryKey = (store: SecondFactorStore) => purposeKey(store.key, 'recovery-code')
const accountTarget = (account: FactorAccount) => `account:${account.id}`
const actorOf = (account: FactorAccount, by: OperatorAudit | undefined): OperatorAudit =>
  by ?? { actor: `account:${account.email}` }

function openTotpSecret(store: SecondFactorStore, row: TotpFactorRow): string {
  const secret = openSecret(totpKey(store), totpContext(row.account_id), row.secret)
  // Only another master key (a settings row replaced) or an altered row gets here.
  if (secret === undefined) throw new Error(`the authenticator secret of account ${row.account_id} does not open`)
  return secret
}

/**
 * Starts (or starts again) enrolling an authenticator: a new pending secret, replacing a pending
 * one. ConflictError when the account has a confirmed one: it must be removed first.
 */
export async function beginTotpEnrolment(
  store: SecondFactorStore,
  account: FactorAccount,
  now: number,
): Promise<TotpEnrolment> {
  const secret = newTotpSecret()
  const sealed = sealSecret(totpKey(store), totpContext(account.id), secret)
  await inTransaction(store.db, async (trx) => {
    const before = await findTotpFactor(trx, account.id)
    if ((before !== undefined && before.confirmed_at !== null) || !(await putPendingTotp(trx, account.id, sealed, now)))
      throw new ConflictError('this account has an authenticator already: remove it before adding another')
    const entry = { action: 'second_factor.totp_begun', target: accountTarget(account), detail: { replaced: !!before } }
    await auditOperator(trx, actorOf(account, undefined), entry, now)
  })
  return { secret, uri: totpUri(secret, account.email) }
}

/** The pending enrolment again (its page shown again after a wrong code), or undefined. */
export async function pendingTotpEnrolment(
  store: SecondFactorStore,
  account: FactorAccount,
): Promise<TotpEnrolment | undefined> {
  const row = await findTotpFactor(store.db, account.id)
  if (row === undefined || row.confirmed_at !== null) return undefined
  const secret = openTotpSecret(store, row)
  return { secret, uri: totpUri(secret, account.email) }
}

/**
 * Confirms the pending authenticator with a code from it: only then does it take effect. Resolves
 * to the recovery codes, in clear this once, or to `wrong` (nothing written: whoever enrols holds
 * the secret, so these codes are not counted as guesses). NotFoundError with nothing pending;
 * ConflictError when it was confirmed or replaced meanwhile.
 */
export async function confirmTotpEnrolment(
  store: SecondFactorStore,
  account: FactorAccount,
  code: string,
  now: number,
  notices?: NoticeContext,
): Promise<{ ok: true; recoveryCodes: string[] } | { ok: false; reason: 'wrong' }> {
  const queued: QueuedNotice[] = []
  type Confirmed = { ok: true; recoveryCodes: string[] } | { ok: false; reason: 'wrong' }
  const result = await inTransaction(store.db, async (trx): Promise<Confirmed> => {
    const row = await findTotpFactor(trx, account.id)
    if (row === undefined) throw new NotFoundError('no authenticator is being added: start again')
    if (row.confirmed_at !== null) throw new ConflictError('this authenticator is confirmed already')
    const step = verifyTotp(openTotpSecret(store, row), code, now)
    if (step === null) return { ok: false, reason: 'wrong' }
    if (!(await confirmPendingTotp(trx, account.id, row.secret, step, now)))
      throw new ConflictError('the authenticator was confirmed or replaced meanwhile: start again')
    const recoveryCodes = await storeNewRecoveryCodes(store, trx, account.id, now)
    const entry = {
      action: 'second_factor.totp_confirmed',
      target: accountTarget(account),
      detail: { recovery_codes: recoveryCodes.length },
    }
    await auditOperator(trx, actorOf(account, undefined), entry, now)
    if (notices) {
      const change = { added: true, factor: { kind: 'totp' as const }, twoStep: true }
      queued.push(await queueSecondFactorNotice(trx, account, change, notices, now))
    }
    return { ok: true, recoveryCodes }
  })
  announceNotices(notices?.held, queued)
  return result
}

async function storeNewRecoveryCodes(
  store: SecondFactorStore,
  trx: Kysely<Database>,
  accountId: string,
  now: number,
): Promise<string[]> {
  const codes = newRecoveryCodes(RECOVERY_CODE_COUNT)
  const key = recoveryKey(store)
  const hashes = codes.map((code) => recoveryCodeHash(key, accountId, normaliseRecoveryCode(code)!))
  await replaceRecoveryCodes(trx, accountId, hashes, now)
  return codes
}

type Outcome = { ok: true; detail: Record<string, unknown> } | { ok: false; reason: 'wrong' | 'replayed' }

/**
 * Counts a code against the account's limit, then checks it with `check` in the same transaction,
 * and records the outcome: a right code is taken back from the count. `detail` is the right code's.
 */
async function limitedCheck(
  db: Kysely<Database>,
  account: FactorAccount,
  kind: 'totp' | 'recovery_code',
  now: number,
  check: (trx: Kysely<Database>) => Promise<Outcome>,
): Promise<{ result: CodeCheck; detail: Record<string, unknown> }> {
  return inTransaction(db, async (trx) => {
    const window = await reserveGuess(trx, account.id, now, LIMIT)
    if (window === undefined) {
      const current = await findGuessWindow(trx, account.id)
      const lockedUntil = (current?.windowStartedAt ?? now) + GUESS_WINDOW_MS
      return { result: { ok: false, reason: 'locked', lockedUntil }, detail: {} }
    }
    const outcome = await check(trx)
    const actor = actorOf(account, undefined)
    const target = accountTarget(account)
    if (outcome.ok) {
      await releaseGuess(trx, account.id)
      const action = kind === 'totp' ? 'second_factor.totp_verified' : 'second_factor.recovery_code_used'
      await auditOperator(trx, actor, { action, target, detail: outcome.detail }, now)
      return { result: { ok: true }, detail: outcome.detail }
    }
    const lockedUntil = window.failures >= GUESS_LIMIT ? window.windowStartedAt + GUESS_WINDOW_MS : null
    const detail = { kind, reason: outcome.reason, failures: window.failures, locked: lockedUntil !== null }
    await auditOperator(trx, actor, { action: 'second_factor.code_refused', target, detail }, now)
    const attemptsLeft = GUESS_LIMIT - window.failures
    return { result: { ok: false, reason: outcome.reason, attemptsLeft, lockedUntil }, detail: {} }
  })
}

/**
 * A sign-in's code from the authenticator: accepted once, within one step either side of `now`,
 * if no code of its step or a later one was accepted before.
 */
export async function verifyTotpCode(
  store: SecondFactorStore,
  account: FactorAccount,
  code: string,
  now: number,
): Promise<CodeCheck> {
  if (!(await hasSecondFactor(store.db, account.id))) return { ok: false, reason: 'not_enrolled' }
  const { result } = await limitedCheck(store.db, account, 'totp', now, async (trx) => {
    const row = await findTotpFactor(trx, account.id)
    // Removed since the look above: nothing to accept the code.
    if (row === undefined || row.confirmed_at === null) return { ok: false, reason: 'wrong' }
    const secret = openTotpSecret(store, row)
    const step = verifyTotp(secret, code, now, row.last_used_step)
    if (step === null) return { ok: false, reason: verifyTotp(secret, code, now) === null ? 'wrong' : 'replayed' }
    // Another request may have accepted the same code since the read: only one write wins.
    if (!(await advanceTotpStep(trx, account.id, step))) return { ok: false, reason: 'replayed' }
    return { ok: true, detail: { step } }
  })
  return result
}

/** A recovery code in place of the authenticator's: each works once. */
export async function useRecoveryCode(
  store: SecondFactorStore,
  account: FactorAccount,
  code: string,
  now: number,
): Promise<RecoveryCheck> {
  if (!(await hasSecondFactor(store.db, account.id))) return { ok: false, reason: 'not_enrolled' }
  const { result, detail } = await limitedCheck(store.db, account, 'recovery_code', now, async (trx) => {
    const normalised = normaliseRecoveryCode(code)
    if (normalised === null) return { ok: false, reason: 'wrong' }
    const hash = recoveryCodeHash(recoveryKey(store), account.id, normalised)
    if (!(await markRecoveryCodeUsed(trx, account.id, hash, now))) return { ok: false, reason: 'wrong' }
    return { ok: true, detail: { codes_left: await countUnusedRecoveryCodes(trx, account.id) } }
  })
  return result.ok ? { ok: true, codesLeft: Number(detail.codes_left) } : result
}

/**
 * Ten new recovery codes in place of the old ones, used or not, in clear this once.
 * ConflictError without a confirmed authenticator.
 */
export async function regenerateRecoveryCodes(
  store: SecondFactorStore,
  account: FactorAccount,
  now: number,
  by?: OperatorAudit,
): Promise<string[]> {
  return inTransaction(store.db, async (trx) => {
    const row = await findTotpFactor(trx, account.id)
    if (row === undefined || row.confirmed_at === null)
      throw new ConflictError('recovery codes come with an authenticator: add one first')
    const codes = await storeNewRecoveryCodes(store, trx, account.id, now)
    const entry = {
      action: 'second_factor.recovery_codes_regenerated',
      target: accountTarget(account),
      detail: { recovery_codes: codes.length },
    }
    await auditOperator(trx, actorOf(account, by), entry, now)
    return codes
  })
}

/**
 * Removes the account's authenticator, pending or confirmed, its recovery codes and its count of
 * refused codes (a reset after a lost phone starts clean); `by` names who did it when not the
 * account itself. Resolves to false, writing nothing, when there was none.
 */
export async function removeTotp(
  db: Kysely<Database>,
  account: FactorAccount,
  now: number,
  by?: OperatorAudit,
  notices?: NoticeContext,
): Promise<boolean> {
  const queued: QueuedNotice[] = []
  const removedAny = await inTransaction(db, async (trx) => {
    if ((await findTotpFactor(trx, account.id)) === undefined) return false
    // In the order the checks lock them (count, authenticator, codes), so the two never deadlock.
    await deleteGuesses(trx, account.id)
    const removed = await deleteTotpFactor(trx, account.id)
    if (removed === undefined) return false
    // Passkeys (a later slice) will keep the codes while the account has one.
    const codes = await deleteRecoveryCodes(trx, account.id)
    const detail = { confirmed: removed.confirmed_at !== null, recovery_codes_removed: codes }
    const entry = { action: 'second_factor.totp_removed', target: accountTarget(account), detail }
    await auditOperator(trx, actorOf(account, by), entry, now)
    // Told only of a factor that was in effect: a pending one never protected the account.
    if (notices && removed.confirmed_at !== null) {
      const change = {
        added: false,
        factor: { kind: 'totp' as const },
        twoStep: await hasSecondFactor(trx, account.id),
      }
      queued.push(await queueSecondFactorNotice(trx, account, change, notices, now))
    }
    return true
  })
  announceNotices(notices?.held, queued)
  return removedAny
}

/** Whether the account has a second factor in effect: a confirmed authenticator app, or a passkey. */
export async function hasSecondFactor(db: Kysely<Database>, accountId: string): Promise<boolean> {
  const row = await findTotpFactor(db, accountId)
  return (row !== undefined && row.confirmed_at !== null) || (await countPasskeys(db, accountId)) > 0
}

/** What an account page shows of the second factor. */
export interface SecondFactorStatus {
  totp: 'none' | 'pending' | 'confirmed'
  confirmedAt: string | null
  recoveryCodesLeft: number
  /** When codes are accepted again, if the limit is reached now. */
  lockedUntil: number | null
}

export async function secondFactorStatus(
  db: Kysely<Database>,
  accountId: string,
  now: number,
): Promise<SecondFactorStatus> {
  const row = await findTotpFactor(db, accountId)
  const window = await findGuessWindow(db, accountId)
  const until = window === undefined ? null : window.windowStartedAt + GUESS_WINDOW_MS
  return {
    totp: row === undefined ? 'none' : row.confirmed_at === null ? 'pending' : 'confirmed',
    confirmedAt: row?.confirmed_at ?? null,
    recoveryCodesLeft: await countUnusedRecoveryCodes(db, accountId),
    lockedUntil: until !== null && until > now && window!.failures >= GUESS_LIMIT ? until : null,
  }
}
