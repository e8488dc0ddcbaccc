/**
 * OIDC login initiation's state and nonce (LTI 1.3 Core 5.1.1, 1EdTech Security Framework 5.1.1):
 * kept server-side rather than in a cookie, because the launch that brings them back is a
 * cross-site POST, often inside the platform's iframe, where a cookie set now would not return.
 * A state is random, stored only as its hash, taken at most once, and lasts LOGIN_MS.
 */
import { createHash, randomBytes } from 'node:crypto'
import type { Kysely } from 'kysely'
import { type Clock, isoAt } from '../clock.js'
import { deleteEndedLoginStates, insertLoginState, takeLoginState } from '../storage/lti-login-state-repository.js'
import type { Database } from '../storage/tables.js'

/** Long enough for a platform's sign-in step; a launch coming back later starts again. */
export const LOGIN_MS = 5 * 60_000

/** SHA-256 (hex) of a state: what is stored, so a database read alone cannot complete a launch. */
export function loginStateHash(state: string): string {
  return createHash('sha256').update(state).digest('hex')
}

export interface StartedLogin {
  state: string
  nonce: string
}

/** A new state and nonce for a login to `registrationId`; states that have ended are removed meanwhile. */
export async function startLogin(db: Kysely<Database>, registrationId: string, clock: Clock): Promise<StartedLogin> {
  const now = clock.now()
  await deleteEndedLoginStates(db, isoAt(now))
  const state = randomBytes(32).toString('base64url')
  const nonce = randomBytes(32).toString('base64url')
  await insertLoginState(db, {
    state_hash: loginStateHash(state),
    registration_id: registrationId,
    nonce,
    expires_at: isoAt(now + LOGIN_MS),
  })
  return { state, nonce }
}

export type ClaimedLogin =
  | { kind: 'claimed'; registrationId: string; nonce: string }
  | { kind: 'unknown' }
  | { kind: 'ended' }

/** Takes the state a launch brought back: once (of two racing launches one wins), and only before it ends. */
export async function claimLogin(db: Kysely<Database>, state: string, clock: Clock): Promise<ClaimedLogin> {
  if (!/^[A-Za-z0-9_-]{43}$/.test(state)) return { kind: 'unknown' }
  const row = await takeLoginState(db, loginStateHash(state))
  if (row === undefined) return { kind: 'unknown' }
  if (row.expires_at <= isoAt(clock.now())) return { kind: 'ended' }
  return { kind: 'claimed', registrationId: row.registration_id, nonce: row.nonce }
}
