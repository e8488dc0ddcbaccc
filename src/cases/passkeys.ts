/**
 * Passkeys (WebAuthn, through @simplewebauthn/server): an account registers several, names and
 * removes them; each is a second factor, and, since a passkey verifies its user, a way to sign in
 * without a password. Challenges are made without storage (domain/passkey-challenge.ts) and
 * recorded when a valid answer uses them, in the transaction that records the passkey's new
 * counter, so that neither an answer nor a challenge works twice.
 */
import {
  type AuthenticationResponseJSON,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server'
import type { Kysely } from 'kysely'
import { ConflictError } from '../domain/errors.js'
import { type ChallengePurpose, challengeExpiry, makeChallenge } from '../domain/passkey-challenge.js'
import { findAccount } from '../storage/account-repository.js'
import { recordAudit } from '../storage/audit-repository.js'
import {
  deletePasskey,
  findPasskey,
  insertPasskey,
  passkeysOf,
  recordPasskeyUse,
  spendChallenge,
} from '../storage/passkey-repository.js'
import type { AccountRow, Database } from '../storage/tables.js'
import { inTransaction } from '../storage/transaction.js'
import { announceNotices, type NoticeContext, queueSecondFactorNotice } from './notices.js'
import { hasSecondFactor } from './second-factor.js'
import { sharedSecret } from './shared-settings.js'

/** Who the passkeys are for: the dashboard's host name and origin, from PUBLIC_URL. */
export interface RelyingParty {
  id: string
  origin: string
  name: string
}

export function relyingParty(publicUrl: string): RelyingParty {
  const url = new URL(publicUrl)
  return { id: url.hostname, origin: url.origin, name: 'Curriculum API' }
}

/** How long a challenge may be answered: enough to find and touch a security key. */
export const CHALLENGE_LIFETIME_MS = 5 * 60_000
/** Passkeys per account: several devices, not a collection. */
export const MAX_PASSKEYS = 10

export type PasskeyRefusal = 'unknown' | 'not-verified' | 'used' | 'too-many' | 'bad-name' | 'other-account'

export class PasskeyRefused extends ConflictError {
  override name = 'PasskeyRefused'
  constructor(
    readonly reason: PasskeyRefusal,
    message: string,
  ) {
    super(message)
  }
}

type Db = Kysely<Database>
const secretOf = (db: Db) => sharedSecret(db, 'passkey-challenges')
const actorOf = (account: Pick<AccountRow, 'email'>) => `account:${account.email}`
const TRY_AGAIN = 'The passkey’s answer could not be checked. Try again, with a passkey of this site.'

/** A challenge check for the verifiers: it remembers the challenge it accepted, to record it as used. */
function challengeCheck(secret: Buffer, purpose: ChallengePurpose, accountId: string | null, now: number) {
  const accepted: { challenge?: string; expiresAt?: number } = {}
  return {
    accepted,
    check(challenge: string): boolean {
      const expiresAt = challengeExpiry(secret, challenge, purpose, accountId, now)
      if (expiresAt === null) return false
      Object.assign(accepted, { challenge, expiresAt })
      return true
    },
  }
}

export async function registrationOptions(
  db: Db,
  account: Pick<AccountRow, 'id' | 'email'>,
  rp: RelyingParty,
  now: number,
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const challenge = makeChallenge(await secretOf(db), 'register', account.id, now + CHALLENGE_LIFETIME_MS)
  const existing = await passkeysOf(db, account.id)
  return generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.id,
    userName: account.email,
    userID: new TextEncoder().encode(account.id),
    challenge,
    timeout: CHALLENGE_LIFETIME_MS,
    attestationType: 'none',
    excludeCredentials: existing.map((p) => ({ id: p.id })),
    // A discoverable credential, so that it can also sign in without a password.
    authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
  })
}

/** Verifies a registration answer and keeps the passkey under `name`; audited. */
export async function registerPasskey(
  db: Db,
  account: Pick<AccountRow, 'id' | 'email'>,
  passkey: { name: string; response: RegistrationResponseJSON },
  rp: RelyingParty,
  now: number,
  notices?: NoticeContext,
): Promise<string> {
  const name = passkey.name.trim()
  if (name === '' || name.length > 60)
    throw new PasskeyRefused('bad-name', 'Give the passkey a name of 1 to 60 characters, e.g. "work laptop".')
  const challenge = challengeCheck(await secretOf(db), 'register', account.id, now)
  const verified = await verifyRegistrationResponse({
    response: passkey.response,
    expectedChallenge: (c) => challenge.check(c),
    expectedOrigin: rp.origin,
    expectedRPID: rp.id,
    requireUserVerification: false,
  }).catch(() => undefined)
  if (verified?.verified !== true || challenge.accepted.challenge === undefined)
    throw new PasskeyRefused('not-verified', TRY_AGAIN)
  const { credential } = verified.registrationInfo
  const { id, queued } = await inTransaction(db, async (trx) => {
    if (!(await spendChallenge(trx, challenge.accepted.challenge!, challenge.accepted.expiresAt!)))
      throw new PasskeyRefused('used', 'This answer was used already. Add the passkey again.')
    if ((await passkeysOf(trx, account.id)).length >= MAX_PASSKEYS)
      throw new PasskeyRefused('too-many', `An account has at most ${MAX_PASSKEYS} passkeys: remove one first.`)
    const added = await insertPasskey(
      trx,
      {
        id: credential.id,
        accountId: account.id,
        name,
        publicKey: Buffer.from(credential.publicKey).toString('base64url'),
        counter: credential.counter,
        transports: credential.transports?.join(' ') ?? null,
      },
      now,
    )
    if (!added) throw new PasskeyRefused('used', 'This passkey is registered already.')
    const entry = { action: 'second_factor.passkey_added', target: `account:${account.id}`, detail: { name } }
    await recordAudit(trx, { actor: actorOf(account), ...entry }, now)
    // The account is told in the same transaction (a security notice, cases/notices.ts).
    const change = { added: true, factor: { kind: 'passkey' as const, name }, twoStep: true }
    const queued = notices ? [await queueSecondFactorNotice(trx, account, change, notices, now)] : []
    return { id: credential.id, queued }
  })
  announceNotices(notices?.held, queued)
  return id
}

/**
 * Options to sign in with a passkey: without a password (`accountId` null: any passkey of this
 * site, which must verify its user), or as the second step of the account `accountId`.
 */
export async function authenticationOptions(
  db: Db,
  accountId: string | null,
  rp: RelyingParty,
  now: number,
): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const purpose: ChallengePurpose = accountId === null ? 'sign-in' : 'second-step'
  const challenge = makeChallenge(await secretOf(db), purpose, accountId, now + CHALLENGE_LIFETIME_MS)
  const allow = accountId === null ? [] : await passkeysOf(db, accountId)
  return generateAuthenticationOptions({
    rpID: rp.id,
    challenge,
    timeout: CHALLENGE_LIFETIME_MS,
    allowCredentials: allow.map((p) => ({
      id: p.id,
      ...(p.transports === null ? {} : { transports: p.transports.split(' ') as never }),
    })),
    userVerification: accountId === null ? 'required' : 'preferred',
  })
}

/**
 * Verifies a passkey's answer and returns the account it signs in: any account for a sign-in
 * without a password, or only `accountId` for a second step. Of two uses of one answer, one wins.
 */
export async function verifyPasskey(
  db: Db,
  response: AuthenticationResponseJSON,
  accountId: string | null,
  rp: RelyingParty,
  now: number,
): Promise<AccountRow> {
  const passkey = typeof response?.id === 'string' ? await findPasskey(db, response.id) : undefined
  if (passkey === undefined)
    throw new PasskeyRefused('unknown', 'This passkey is not registered here: sign in with your password.')
  if (accountId !== null && passkey.account_id !== accountId)
    throw new PasskeyRefused('other-account', 'This passkey belongs to another account.')
  const purpose: ChallengePurpose = accountId === null ? 'sign-in' : 'second-step'
  const challenge = challengeCheck(await secretOf(db), purpose, accountId, now)
  const verified = await verifyAuthenticationResponse({
    response,
    expectedChallenge: (c) => challenge.check(c),
    expectedOrigin: rp.origin,
    expectedRPID: rp.id,
    credential: {
      id: passkey.id,
      publicKey: Uint8Array.from(Buffer.from(passkey.public_key, 'base64url')),
      counter: passkey.counter,
      ...(passkey.transports === null ? {} : { transports: passkey.transports.split(' ') }),
    },
    requireUserVerification: accountId === null,
  }).catch(() => undefined)
  if (verified?.verified !== true || challenge.accepted.challenge === undefined)
    throw new PasskeyRefused('not-verified', TRY_AGAIN)
  return inTransaction(db, async (trx) => {
    const use = { id: passkey.id, seen: passkey.counter, counter: verified.authenticationInfo.newCounter }
    if (
      !(await spendChallenge(trx, challenge.accepted.challenge!, challenge.accepted.expiresAt!)) ||
      !(await recordPasskeyUse(trx, use, now))
    )
      throw new PasskeyRefused('used', 'This answer was used already: sign in again.')
    const account = await findAccount(trx, passkey.account_id)
    if (account === undefined) throw new PasskeyRefused('unknown', 'This passkey’s account is gone.')
    return account
  })
}

export async function removePasskey(
  db: Db,
  account: Pick<AccountRow, 'id' | 'email'>,
  id: string,
  now: number,
  notices?: NoticeContext,
): Promise<boolean> {
  const { removed, queued } = await inTransaction(db, async (trx) => {
    const passkey = await findPasskey(trx, id)
    if (passkey === undefined || passkey.account_id !== account.id || !(await deletePasskey(trx, account.id, id)))
      return { removed: false, queued: [] }
    const target = `account:${account.id}`
    const entry = { action: 'second_factor.passkey_removed', target, detail: { name: passkey.name } }
    await recordAudit(trx, { actor: actorOf(account), ...entry }, now)
    if (notices === undefined) return { removed: true, queued: [] }
    const factor = { kind: 'passkey' as const, name: passkey.name }
    const change = { added: false, factor, twoStep: await hasSecondFactor(trx, account.id) }
    return { removed: true, queued: [await queueSecondFactorNotice(trx, account, change, notices, now)] }
  })
  announceNotices(notices?.held, queued)
  return removed
}
