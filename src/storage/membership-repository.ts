/**
 * Who belongs to which organisation, and as what (migration 0020). Queries only: the rules (the
 * last owner, who may change what) are in cases/members.ts.
 */
import { type Kysely, PostgresAdapter } from 'kysely'
import { isoAt } from '../clock.js'
import type { MemberRole } from '../domain/member-roles.js'
import type { OrganisationStatus } from '../domain/application-state.js'
import type { Database } from './tables.js'

/**
 * Holds the organisation's members still until `trx` ends, and says whether the organisation
 * exists. On PostgreSQL, the organisation's row locked `FOR NO KEY UPDATE` makes every change to
 * its members (and invitations) wait for the one before, so a count of owners read after it stays
 * true until commit, while the foreign-key checks of other writes (`FOR KEY SHARE`) are not held
 * up; on SQLite a writing transaction already runs alone.
 */
export async function lockOrganisationMembers(trx: Kysely<Database>, organisationId: string): Promise<boolean> {
  const query = trx.selectFrom('organisations').select('id').where('id', '=', organisationId)
  const locked = trx.getExecutor().adapter instanceof PostgresAdapter ? query.forNoKeyUpdate() : query
  return (await locked.executeTakeFirst()) !== undefined
}

export async function insertMembership(
  db: Kysely<Database>,
  membership: { organisationId: string; accountId: string; role: MemberRole },
  now: number,
): Promise<boolean> {
  const result = await db
    .insertInto('memberships')
    .values({
      organisation_id: membership.organisationId,
      account_id: membership.accountId,
      role: membership.role,
      created_at: isoAt(now),
    })
    .onConflict((oc) => oc.columns(['organisation_id', 'account_id']).doNothing())
    .executeTakeFirst()
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1
}

/** The account's role in the organisation, or undefined when it is no member. */
export async function roleIn(
  db: Kysely<Database>,
  organisationId: string,
  accountId: string,
): Promise<MemberRole | undefined> {
  const row = await db
    .selectFrom('memberships')
    .select('role')
    .where('organisation_id', '=', organisationId)
    .where('account_id', '=', accountId)
    .executeTakeFirst()
  return row?.role
}

export async function countOwners(db: Kysely<Database>, organisationId: string): Promise<number> {
  const row = await db
    .selectFrom('memberships')
    .select((eb) => eb.fn.countAll<number | string>().as('owners'))
    .where('organisation_id', '=', organisationId)
    .where('role', '=', 'owner')
    .executeTakeFirstOrThrow()
  return Number(row.owners)
}

export async function setMembershipRole(
  db: Kysely<Database>,
  organisationId: string,
  accountId: string,
  role: MemberRole,
): Promise<boolean> {
  const result = await db
    .updateTable('memberships')
    .set({ role })
    .where('organisation_id', '=', organisationId)
    .where('account_id', '=', accountId)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) === 1
}

export async function deleteMembership(
  db: Kysely<Database>,
  organisationId: string,
  accountId: string,
): Promise<boolean> {
  const result = await db
    .deleteFrom('memberships')
    .where('organisation_id', '=', organisationId)
    .where('account_id', '=', accountId)
    .executeTakeFirst()
  return Number(result.numDeletedRows) === 1
}

/**
 * What leaving an organisation does to the account itself: `accounts.organisation_id` (which the
 * partner pages still read) no longer names it. True when it did.
 */
export async function clearAccountOrganisation(
  db: Kysely<Database>,
  accountId: string,
  organisationId: string,
): Promise<boolean> {
  const result = await db
    .updateTable('accounts')
    .set({ organisation_id: null })
    .where('id', '=', accountId)
    .where('organisation_id', '=', organisationId)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) === 1
}

export interface Member {
  accountId: string
  email: string
  role: MemberRole
  /** When the account became a member (ISO). */
  since: string
}

const ROLE_ORDER = { owner: 0, developer: 1, viewer: 2 } as const

/** The organisation's members: owners first, then developers, then viewers, each by address. */
export async function membersOf(db: Kysely<Database>, organisationId: string): Promise<Member[]> {
  const rows = await db
    .selectFrom('memberships as m')
    .innerJoin('accounts as a', 'a.id', 'm.account_id')
    .select(['m.account_id', 'a.email', 'm.role', 'm.created_at'])
    .where('m.organisation_id', '=', organisationId)
    .execute()
  return rows
    .map((row) => ({ accountId: row.account_id, email: row.email, role: row.role, since: row.created_at }))
    .sort((a, b) => ROLE_ORDER[a.role] - ROLE_ORDER[b.role] || (a.email < b.email ? -1 : a.email > b.email ? 1 : 0))
}

/** The member of the organisation with this (normalised) address, if any. */
export async function memberByEmail(
  db: Kysely<Database>,
  organisationId: string,
  email: string,
): Promise<{ accountId: string; role: MemberRole } | undefined> {
  const row = await db
    .selectFrom('memberships as m')
    .innerJoin('accounts as a', 'a.id', 'm.account_id')
    .select(['m.account_id', 'm.role'])
    .where('m.organisation_id', '=', organisationId)
    .where('a.email', '=', email)
    .executeTakeFirst()
  return row === undefined ? undefined : { accountId: row.account_id, role: row.role }
}

export interface AccountOrganisation {
  organisationId: string
  name: string
  status: OrganisationStatus
  role: MemberRole
}

/** The organisations the account belongs to, by name: what it may switch between. */
export async function organisationsOf(db: Kysely<Database>, accountId: string): Promise<AccountOrganisation[]> {
  const rows = await db
    .selectFrom('memberships as m')
    .innerJoin('organisations as o', 'o.id', 'm.organisation_id')
    .select(['o.id', 'o.name', 'o.status', 'm.role'])
    .where('m.account_id', '=', accountId)
    .orderBy('o.name')
    .orderBy('o.id')
    .execute()
  return rows.map((row) => ({ organisationId: row.id, name: row.name, status: row.status, role: row.role }))
}

/** Whether the organisation's members must have a second factor (1) or not (0). */
export async function setRequireSecondFactor(
  db: Kysely<Database>,
  organisationId: string,
  required: boolean,
): Promise<void> {
  await db
    .updateTable('organisations')
    .set({ require_second_factor: required ? 1 : 0 })
    .where('id', '=', organisationId)
    .execute()
}

/** Of `accountIds`, those with a confirmed authenticator: the Members page shows who has a second factor. */
export async function withSecondFactor(db: Kysely<Database>, accountIds: readonly string[]): Promise<Set<string>> {
  if (accountIds.length === 0) return new Set()
  const rows = await db
    .selectFrom('totp_factors')
    .select('account_id')
    .where('account_id', 'in', accountIds)
    .where('confirmed_at', 'is not', null)
    .execute()
  return new Set(rows.map((row) => row.account_id))
}
