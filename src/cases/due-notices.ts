/**
 * The time-based notices (docs/accounts.md "Notices"), found by the hourly task
 * (services/notice-task.ts): an agreement ending within 30 days with none to follow it, a live key
 * expiring within 7 days, an ended agreement's deletion deadline 14 and 3 days ahead and once
 * passed without an attestation, and an operation of the API deprecated (domain/deprecation.ts),
 * told to the owners of every organisation whose keys called the API in the last 30 days, until
 * its sunset (docs/versioning.md).
 *
 * Each is sent once: its transaction first claims (kind, subject, threshold) in `notices_sent`,
 * whose unique key lets one of several instances running the task at once insert it; the others
 * insert nothing and queue nothing. When a task first sees a deadline late (an agreement recorded
 * with a short period), only the most urgent threshold that applies is sent.
 *
 * A suspended organisation is told nothing of its agreements' expiry or its keys (neither works
 * for it while suspended), but is told of its deletion deadlines: its duty to delete stays.
 */
import type { Kysely } from 'kysely'
import { DEPRECATED_OPERATIONS, type Deprecation } from '../domain/deprecation.js'
import { agreementEnds } from '../storage/agreement-end-repository.js'
import {
  agreementsExpiringBy,
  claimNotice,
  keysExpiringBy,
  noticeSent,
  openAgreementsOf,
  organisationName,
  organisationsCallingSince,
} from '../storage/notice-repository.js'
import type { Database } from '../storage/tables.js'
import { inTransaction } from '../storage/transaction.js'
import {
  agreementEndingMail,
  type DeadlineThreshold,
  deletionDeadlineMail,
  deprecationMail,
  keyExpiringMail,
} from './notice-mail.js'
import type { OutgoingMail } from './mail.js'
import {
  announceNotices,
  type NoticeContext,
  type NoticeTopic,
  type QueuedNotice,
  queueOrganisationNotice,
} from './notices.js'

type Db = Kysely<Database>

const DAY_MS = 86_400_000
export const AGREEMENT_ENDING_NOTICE_MS = 30 * DAY_MS
export const KEY_EXPIRING_NOTICE_MS = 7 * DAY_MS
/** A deadline passed longer ago than this is not told of: a new deployment does not mail about old ends. */
export const PASSED_DEADLINE_NOTICE_MS = 30 * DAY_MS
/** An organisation whose keys called the API this recently may call a deprecated operation: its owners are told. */
export const DEPRECATION_AUDIENCE_MS = 30 * DAY_MS

/** Which deadline notice applies `dueAt - now` ahead, if any: the most urgent one. */
export function deadlineThreshold(dueAt: number, now: number): DeadlineThreshold | undefined {
  const left = dueAt - now
  if (left <= 0) return now - dueAt <= PASSED_DEADLINE_NOTICE_MS ? 'passed' : undefined
  if (left <= 3 * DAY_MS) return '3d'
  if (left <= 14 * DAY_MS) return '14d'
  return undefined
}

interface Due {
  kind: OutgoingMail['kind']
  subject: string
  threshold: string
  organisationId: string
  /** Who is told: the topic's roles, less those who turned it off; without one, the owners. */
  topic: NoticeTopic | undefined
  compose: (to: string) => OutgoingMail
}

/** Claims the notice and queues its mails in one transaction; none when another instance claimed it. */
async function send(db: Db, due: Due, now: number): Promise<QueuedNotice[]> {
  return inTransaction(db, async (trx) => {
    const notice = { kind: due.kind, subject: due.subject, threshold: due.threshold }
    if (!(await claimNotice(trx, notice, now))) return []
    return queueOrganisationNotice(trx, due.organisationId, due.topic, due.compose, now)
  })
}

/** Whether another open agreement of the organisation is in force at `at` or starts by then. */
async function followed(db: Db, organisationId: string, agreementId: string, at: string): Promise<boolean> {
  return (await openAgreementsOf(db, organisationId)).some(
    (other) =>
      other.id !== agreementId && other.signed_at <= at && (other.expires_at === null || other.expires_at > at),
  )
}

/**
 * Each deprecated operation before its sunset, to each organisation calling the API that was not
 * told of it yet (once per organisation, operation and sunset: a later sunset is told again).
 */
async function deprecationNotices(
  db: Db,
  now: number,
  publicUrl: string,
  deprecations: Readonly<Record<string, Deprecation>>,
): Promise<Due[]> {
  const operations = Object.entries(deprecations).filter(([, dates]) => Date.parse(dates.sunsetAt) > now)
  if (operations.length === 0) return []
  const due: Due[] = []
  for (const organisation of await organisationsCallingSince(db, now - DEPRECATION_AUDIENCE_MS)) {
    for (const [operation, { deprecatedAt, sunsetAt }] of operations) {
      const notice = {
        kind: 'api-deprecation' as const,
        subject: `${organisation.id} ${operation}`,
        threshold: sunsetAt,
      }
      if (await noticeSent(db, notice)) continue
      const about = { organisation: organisation.name, operation, deprecatedAt, sunsetAt }
      const compose = (to: string) => deprecationMail(to, about, publicUrl)
      due.push({ ...notice, organisationId: organisation.id, topic: undefined, compose })
    }
  }
  return due
}

async function dueNotices(db: Db, now: number, context: NoticeContext): Promise<Due[]> {
  const { publicUrl } = context
  const due: Due[] = await deprecationNotices(db, now, publicUrl, context.deprecations ?? DEPRECATED_OPERATIONS)
  for (const agreement of await agreementsExpiringBy(db, now, now + AGREEMENT_ENDING_NOTICE_MS)) {
    const expiresAt = agreement.expires_at!
    if (await followed(db, agreement.organisation_id, agreement.id, expiresAt)) continue
    const notice = { organisation: agreement.organisation, document: agreement.document_ref, signedAt: '', expiresAt }
    due.push({
      kind: 'agreement-ending',
      subject: agreement.id,
      threshold: '30d',
      organisationId: agreement.organisation_id,
      topic: 'agreements',
      compose: (to) => agreementEndingMail(to, notice, publicUrl),
    })
  }
  for (const key of await keysExpiringBy(db, now, now + KEY_EXPIRING_NOTICE_MS)) {
    const notice = {
      organisation: key.organisation,
      name: key.name,
      prefix: key.display_prefix,
      expiresAt: key.expires_at!,
    }
    due.push({
      kind: 'key-expiring',
      subject: key.id,
      threshold: '7d',
      organisationId: key.organisation_id,
      topic: 'keys',
      compose: (to) => keyExpiringMail(to, notice, publicUrl),
    })
  }
  for (const end of await agreementEnds(db, now)) {
    if (end.attestation !== null) continue
    const threshold = deadlineThreshold(Date.parse(end.deletionDueAt), now)
    if (threshold === undefined) continue
    const organisation = (await organisationName(db, end.organisationId)) ?? end.organisationId
    const notice = { organisation, document: end.agreement.document_ref, deletionDueAt: end.deletionDueAt, threshold }
    due.push({
      kind: 'deletion-deadline',
      subject: end.agreement.id,
      threshold,
      organisationId: end.organisationId,
      topic: 'deletion',
      compose: (to) => deletionDeadlineMail(to, notice, publicUrl),
    })
  }
  return due
}

/**
 * Sends every time-based notice due at `now` that no instance sent yet, each in its own
 * transaction; resolves to how many messages it queued. Safe to run at once on several instances.
 */
export async function sendDueNotices(db: Db, now: number, context: NoticeContext): Promise<number> {
  let queued = 0
  for (const due of await dueNotices(db, now, context)) {
    const sent = await send(db, due, now)
    announceNotices(context.held, sent)
    queued += sent.length
  }
  return queued
}
