/**
 * The login states of LTI launches (migration 0028): the hash of a state the tool sent a
 * platform, the registration it was sent for, and the nonce the id_token must carry. Each is
 * taken once; cases/lti-login.ts holds the rules.
 */
import type { Kysely } from 'kysely'
import type { Database, LtiLoginStatesTable } from './tables.js'

type Db = Kysely<Database>

export async function insertLoginState(db: Db, row: LtiLoginStatesTable): Promise<void> {
  await db.insertInto('lti_login_states').values(row).execute()
}

/** Removes and returns the state's row: of two takers of one state, one gets it. */
export function takeLoginState(db: Db, stateHash: string): Promise<LtiLoginStatesTable | undefined> {
  return db.deleteFrom('lti_login_states').where('state_hash', '=', stateHash).returningAll().executeTakeFirst()
}

/** Removes the states that ended before `nowIso`; how many. */
export async function deleteEndedLoginStates(db: Db, nowIso: string): Promise<number> {
  const result = await db.deleteFrom('lti_login_states').where('expires_at', '<', nowIso).executeTakeFirst()
  return Number(result.numDeletedRows)
}
