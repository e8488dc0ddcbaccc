/**
 * What notices need of the database (migration 0022): who is to be told, what each account turned
 * off, which time-based notices went out, the browsers each account signed in from, and what is
 * due. Queries only: the rules are in cases/notices.ts and cases/due-notices.ts.
 */
import type { Kysely } from 'kysely'
import { isoAt } from '../clock.js'
import type { MemberRole } from '../domain/member-roles.js'
import type { Database } from './tables.js'

type Db = Kysely<Database>

export interface NoticeRecipient {
  accountId: string
  email: string
}

/**
 * The members of `organisationId` with one of `roles` who have not turned `topic` off (all of
 * them without a topic), by address. A suspended organisation's members are asked for by the
 * caller, which decides.
 */
export async function noticeRecipients(
  db: Db,
  organisationId: string,
  roles: readonly MemberRole[],
  topic: string | undefined,
): Promise<NoticeRecipient[]> {
  const rows = await db
    .selectFrom('memberships as m')
    .innerJoin('accounts as a', 'a.id', 'm.account_id')
    .select(['a.id', 'a.email'])
    .where('m.organisation_id', '=', organisationId)
    .where('m.role', 'in', [...roles])
    .$if(topic !== undefined, (query) =>
      query.where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('notice_opt_outs as o')
              .select('o.account_id')
              .whereRef('o.account_id', '=', 'a.id')
              .where('o.topic', '=', topic!),
          ),
        ),
      ),
    )
    .orderBy('a.email')
    .execute()
  return rows.map((row) => ({ accountId: row.id, email: row.email }))
}

export async function optedOutTopics(db: Db, accountId: string): Promise<string[]> {
  const rows = await db.selectFrom('notice_opt_outs').select('topic').where('account_id', '=', accountId).execute()
  return rows.map((row) => row.topic).sort()
}

/** Replaces the account's opt-outs with `topics`. */
export async function replaceOptOuts(db: Db, accountId: string, topics: readonly string[], now: number) {
  await db.deleteFrom('notice_opt_outs').where('account_id', '=', accountId).execute()
  if (topics.length > 0)
    await db
      .insertInto('notice_opt_outs')
      .values(topics.map((topic) => ({ account_id: accountId, topic, created_at: isoAt(now) })))
      .execute()
}

/**
 * Marks the notice (kind, subject, threshold) sent and says whether this call did: of several
 * instances at once, the unique key lets one insert and the others find it there.
 */
export async function claimNotice(
  db: Db,
  notice: { kind: string; subject: string; threshold: string },
  now: number,
): Promise<boolean> {
  const result = await db
    .insertInto('notices_sent')
    .values({ ...notice, sent_at: isoAt(now) })
    .onConflict((oc) => oc.columns(['kind', 'subject', 'threshold']).doNothing())
    .executeTakeFirst()
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1
}

export async function noticeSent(db: Db, notice: { kind: string; subject: string; threshold: string }) {
  const row = await db
    .selectFrom('notices_sent')
    .select('sent_at')
    .where('kind', '=', notice.kind)
    .where('subject', '=', notice.subject)
    .where('threshold', '=', notice.threshold)
    .executeTakeFirst()
  return row !== undefined
}

/**
 * Records the device's sign-in; `known` when the account had signed in from it before, `first`
 * when the account had no device at all (its first sign-in).
 */
export async function recordDevice(
  db: Db,
  accountId: string,
  deviceHash: string,
  now: number,
): Promise<{ known: boolean; first: boolean }> {
  const touched = await db
    .updateTable('known_devices')
    .set({ last_seen_at: isoAt(now) })
    .where('account_id', '=', accountId)
    .where('device_hash', '=', deviceHash)
    .executeTakeFirst()
  if (Number(touched.numUpdatedRows) > 0) return { known: true, first: false }
  const any = await db.selectFrom('known_devices').select('device_hash').where('account_id', '=', accountId).limit(1)
  const first = (await any.executeTakeFirst()) === undefined
  const inserted = await db
    .insertInto('known_devices')
    .values({ account_id: accountId, device_hash: deviceHash, first_seen_at: isoAt(now), last_seen_at: isoAt(now) })
    .onConflict((oc) => oc.columns(['account_id', 'device_hash']).doNothing())
    .executeTakeFirst()
  // Inserted by a concurrent sign-in of the same browser: known after all.
  const known = Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 0
  return { known, first: first && !known }
}

/** Live keys of active partner organisations, neither revoked nor expired, expiring by `until`. */
export function keysExpiringBy(db: Db, now: number, until: number) {
  return db
    .selectFrom('api_keys as k')
    .innerJoin('organisations as o', 'o.id', 'k.organisation_id')
    .select(['k.id', 'k.organisation_id', 'k.name', 'k.display_prefix', 'k.expires_at', 'o.name as organisation'])
    .where('k.mode', '=', 'live')
    .where('k.revoked_at', 'is', null)
    .where('k.expires_at', '>', isoAt(now))
    .where('k.expires_at', '<=', isoAt(until))
    .where('o.status', '=', 'active')
    .where('o.kind', '=', 'partner')
    .execute()
}

/** Active partner organisations any of whose keys was used at `since` or later, by name. */
export function organisationsCallingSince(db: Db, since: number) {
  return db
    .selectFrom('organisations as o')
    .select(['o.id', 'o.name'])
    .where('o.status', '=', 'active')
    .where('o.kind', '=', 'partner')
    .where(({ exists, selectFrom }) =>
      exists(
        selectFrom('api_keys as k')
          .select('k.id')
          .whereRef('k.organisation_id', '=', 'o.id')
          .where('k.last_used_at', '>=', isoAt(since)),
      ),
    )
    .orderBy('o.name')
    .execute()
}

/** Agreements of active partner organisations, not ended, expiring after `now` and by `until`. */
export function agreementsExpiringBy(db: Db, now: number, until: number) {
  return db
    .selectFrom('agreements as a')
    .innerJoin('organisations as o', 'o.id', 'a.organisation_id')
    .select(['a.id', 'a.organisation_id', 'a.document_ref', 'a.expires_at', 'o.name as organisation'])
    .where('a.ended_at', 'is', null)
    .where('a.expires_at', '>', isoAt(now))
    .where('a.expires_at', '<=', isoAt(until))
    .where('o.status', '=', 'active')
    .where('o.kind', '=', 'partner')
    .execute()
}

/** The organisation's agreements not ended, to tell whether one goes on past another's expiry. */
export function openAgreementsOf(db: Db, organisationId: string) {
  return db
    .selectFrom('agreements')
    .select(['id', 'signed_at', 'expires_at'])
    .where('organisation_id', '=', organisationId)
    .where('ended_at', 'is', null)
    .execute()
}

export async function organisationName(db: Db, organisationId: string): Promise<string | undefined> {
  const row = await db.selectFrom('organisations').select('name').where('id', '=', organisationId).executeTakeFirst()
  return row?.name
}

/** A webhook endpoint with its organisation's name and status, and why it is disabled. */
export async function disabledEndpoint(db: Db, endpointId: string) {
  const row = await db
    .selectFrom('webhook_endpoints as e')
    .innerJoin('organisations as o', 'o.id', 'e.organisation_id')
    .select(['e.organisation_id', 'e.url', 'e.disabled_reason', 'o.name', 'o.status'])
    .where('e.id', '=', endpointId)
    .executeTakeFirst()
  return row === undefined
    ? undefined
    : {
        organisationId: row.organisation_id,
        url: row.url,
        reason: row.disabled_reason,
        organisation: row.name,
        status: row.status,
      }
}
