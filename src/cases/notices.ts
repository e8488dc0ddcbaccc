/**
 * Notices (docs/accounts.md "Notices"): mail about what happened to an application, an agreement,
 * a key, a webhook endpoint, an ended agreement's deletion, or the account's own security. Each is
 * queued in the transaction of the event it tells of (or of the hourly task, cases/due-notices.ts),
 * so a notice goes out exactly when its event commits.
 *
 * Who gets it: an organisation's notice goes to the members of the roles its topic names, except
 * those who turned the topic off; security notices (a new device, a second factor added or
 * removed: an authenticator app or a passkey) go to the account whatever it chose, and cannot be turned off.
 */
import { createHash } from 'node:crypto'
import type { Kysely } from 'kysely'
import { isoAt } from '../clock.js'
import type { Deprecation } from '../domain/deprecation.js'
import { browserFamily } from '../domain/user-agent.js'
import type { MemberRole } from '../domain/member-roles.js'
import type { SessionOrigin } from '../storage/account-repository.js'
import { findAccount } from '../storage/account-repository.js'
import {
  disabledEndpoint,
  noticeRecipients,
  optedOutTopics,
  organisationName,
  recordDevice,
  replaceOptOuts,
} from '../storage/notice-repository.js'
import type { Database } from '../storage/tables.js'
import { inTransaction } from '../storage/transaction.js'
import { announceMail, type HeldMailNotice, type OutgoingMail, queueMail } from './mail.js'
import {
  agreementRecordedMail,
  applicationApprovedMail,
  applicationRejectedMail,
  newDeviceMail,
  type SecondFactorChange,
  secondFactorChangedMail,
  webhookDisabledMail,
} from './notice-mail.js'

type Db = Kysely<Database>

/** What a case needs to queue notices: the dashboard's address for their links, and the held-mail log. */
export interface NoticeContext {
  publicUrl: string
  held?: HeldMailNotice
  /** Operations announced for removal, instead of DEPRECATED_OPERATIONS (tests). */
  deprecations?: Readonly<Record<string, Deprecation>>
}

/** The notices a member may turn off, each with who gets it. */
export const NOTICE_TOPICS = {
  agreements: {
    label: 'Agreements: one recorded, and one ending within 30 days',
    roles: ['owner'],
  },
  keys: { label: 'A live key expiring within 7 days', roles: ['owner', 'developer'] },
  webhooks: { label: 'A webhook endpoint disabled after failing deliveries', roles: ['owner', 'developer'] },
  deletion: {
    label: 'Deletion deadlines of an ended agreement: 14 and 3 days ahead, and when passed without an attestation',
    roles: ['owner'],
  },
} as const satisfies Record<string, { label: string; roles: readonly MemberRole[] }>

export type NoticeTopic = keyof typeof NOTICE_TOPICS

export const isNoticeTopic = (value: string): value is NoticeTopic => Object.hasOwn(NOTICE_TOPICS, value)

/** A message queued in a transaction, to be announced once it commits. */
export interface QueuedNotice {
  id: number
  mail: OutgoingMail
}

/** Announces queued notices in the held-mail log, after their transaction committed. */
export function announceNotices(held: HeldMailNotice | undefined, queued: readonly QueuedNotice[]): void {
  for (const { id, mail } of queued) announceMail(held, id, mail)
}

/**
 * Queues `compose(address)` for each member of the organisation whom `topic` reaches (by role, not
 * turned off), or without a topic for each owner, whatever they chose: that is how a deprecation of
 * an operation of the API is told (cases/due-notices.ts). Run it in the event's transaction.
 */
export async function queueOrganisationNotice(
  trx: Db,
  organisationId: string,
  topic: NoticeTopic | undefined,
  compose: (to: string) => OutgoingMail,
  now: number,
): Promise<QueuedNotice[]> {
  const queued: QueuedNotice[] = []
  const roles = topic === undefined ? (['owner'] as const) : NOTICE_TOPICS[topic].roles
  for (const recipient of await noticeRecipients(trx, organisationId, roles, topic)) {
    const mail = compose(recipient.email)
    queued.push({ id: await queueMail(trx, mail, now), mail })
  }
  return queued
}

/** The topics the account gets: all but those it turned off. */
export async function noticePreferences(db: Db, accountId: string): Promise<Record<NoticeTopic, boolean>> {
  const off = new Set(await optedOutTopics(db, accountId))
  const topics = Object.keys(NOTICE_TOPICS) as NoticeTopic[]
  return Object.fromEntries(topics.map((topic) => [topic, !off.has(topic)])) as Record<NoticeTopic, boolean>
}

/** Keeps the topics `on` and turns the others off; unknown names are ignored. */
export async function setNoticePreferences(db: Db, accountId: string, on: readonly string[], now: number) {
  const off = (Object.keys(NOTICE_TOPICS) as NoticeTopic[]).filter((topic) => !on.includes(topic))
  await inTransaction(db, (trx) => replaceOptOuts(trx, accountId, off, now))
}

/** The security notice of a second factor added or removed; run it in the change's transaction. */
export async function queueSecondFactorNotice(
  trx: Db,
  account: { email: string },
  change: SecondFactorChange,
  context: NoticeContext,
  now: number,
): Promise<QueuedNotice> {
  const mail = secondFactorChangedMail(account.email, change, context.publicUrl)
  return { id: await queueMail(trx, mail, now), mail }
}

/** SHA-256 (hex) of a device cookie's value: all the database keeps of it. */
export const deviceHash = (token: string) => createHash('sha256').update(token).digest('hex')

/**
 * A full sign-in from the browser whose device cookie is `deviceToken`: remembered for the
 * account, and, when the account had signed in before from other browsers only, the account is
 * told (a security notice, always sent). The first sign-in of an account is not "new".
 */
export async function recordSignInDevice(
  db: Db,
  account: { id: string; email: string },
  deviceToken: string,
  origin: SessionOrigin,
  context: NoticeContext,
  now: number,
): Promise<{ notified: boolean }> {
  const queued = await inTransaction(db, async (trx) => {
    const seen = await recordDevice(trx, account.id, deviceHash(deviceToken), now)
    if (seen.known || seen.first) return undefined
    const browser = browserFamily(origin.userAgent)
    const mail = newDeviceMail(account.email, { at: isoAt(now), browser, address: origin.address }, context.publicUrl)
    return { id: await queueMail(trx, mail, now), mail }
  })
  if (queued !== undefined) announceNotices(context.held, [queued])
  return { notified: queued !== undefined }
}

/** An endpoint the delivery worker just disabled after failing deliveries, told to its organisation. */
export async function queueEndpointDisabledNotice(
  trx: Db,
  endpointId: string,
  context: NoticeContext,
  now: number,
): Promise<QueuedNotice[]> {
  const endpoint = await disabledEndpoint(trx, endpointId)
  // A suspended organisation's endpoints get no deliveries worth telling of.
  if (endpoint === undefined || endpoint.status !== 'active') return []
  const about = { organisation: endpoint.organisation, url: endpoint.url, reason: endpoint.reason ?? '' }
  const compose = (to: string) => webhookDisabledMail(to, about, context.publicUrl)
  return queueOrganisationNotice(trx, endpoint.organisationId, 'webhooks', compose, now)
}

/** An application's decision, told to the account that applied (whatever it chose: it asked). */
export async function queueDecisionNotice(
  trx: Db,
  decided: { account_id: string; organisation_name: string; decision_reason: string | null; state: string },
  grantedScopes: readonly string[],
  context: NoticeContext,
  now: number,
): Promise<QueuedNotice[]> {
  const account = await findAccount(trx, decided.account_id)
  if (account === undefined) return []
  const mail =
    decided.state === 'approved'
      ? applicationApprovedMail(
          account.email,
          { organisation: decided.organisation_name, scopes: grantedScopes },
          context.publicUrl,
        )
      : applicationRejectedMail(
          account.email,
          { organisation: decided.organisation_name, reason: decided.decision_reason ?? '' },
          context.publicUrl,
        )
  return [{ id: await queueMail(trx, mail, now), mail }]
}

/** A recorded agreement, told to the organisation's owners. */
export async function queueAgreementRecordedNotice(
  trx: Db,
  agreement: { organisation_id: string; document_ref: string; signed_at: string; expires_at: string | null },
  context: NoticeContext,
  now: number,
): Promise<QueuedNotice[]> {
  const organisation = (await organisationName(trx, agreement.organisation_id)) ?? agreement.organisation_id
  const about = {
    organisation,
    document: agreement.document_ref,
    signedAt: agreement.signed_at,
    expiresAt: agreement.expires_at,
  }
  const compose = (to: string) => agreementRecordedMail(to, about, context.publicUrl)
  return queueOrganisationNotice(trx, agreement.organisation_id, 'agreements', compose, now)
}
