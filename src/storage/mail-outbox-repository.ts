/**
 * The mail outbox's queries (the rules are cases/mail.ts's): queueing a message, claiming due ones
 * with a lease so that one instance sends each at a time, recording an attempt's outcome, turning
 * sends whose lease ran out into `interrupted`, putting one back in the queue, and the Outbox page's
 * listing.
 */
import type { Kysely } from 'kysely'
import { isoAt } from '../clock.js'
import { keysetPage } from './keyset-page.js'
import type { Database, MailRow, MailState } from './tables.js'

type Db = Kysely<Database>

/** A row as read: PostgreSQL gives its integers back as strings. */
function mailRow(row: MailRow): MailRow {
  return { ...row, id: Number(row.id), attempts: Number(row.attempts) }
}

export interface NewMail {
  kind: string
  recipient: string
  subject: string
  text: string
  html: string | null
}

/** Adds a pending message, due at once; resolves to its id. */
export async function insertMail(db: Db, mail: NewMail, now: number): Promise<number> {
  const row = await db
    .insertInto('mail_outbox')
    .values({
      kind: mail.kind,
      recipient: mail.recipient,
      subject: mail.subject,
      text_body: mail.text,
      html_body: mail.html,
      created_at: isoAt(now),
      state: 'pending',
      next_attempt_at: isoAt(now),
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  return Number(row.id)
}

/** Whether a claim at `now` would find work: a due message, or a send whose lease ran out. */
export async function hasMailToClaim(db: Db, now: number): Promise<boolean> {
  const at = isoAt(now)
  const found = await db
    .selectFrom('mail_outbox')
    .select('id')
    .where((eb) =>
      eb.or([
        eb.and([eb('state', '=', 'pending'), eb('next_attempt_at', '<=', at)]),
        eb.and([eb('state', '=', 'sending'), eb('lease_until', '<=', at)]),
      ]),
    )
    .limit(1)
    .executeTakeFirst()
  return found !== undefined
}

/**
 * Sends whose lease ran out before their outcome was recorded become `interrupted` with `reason`
 * (their lease is kept, so that a late outcome of the same claim is still recognised); resolves
 * to their ids.
 */
export async function interruptExpiredSends(db: Db, now: number, reason: string): Promise<number[]> {
  const rows = await db
    .updateTable('mail_outbox')
    .set({ state: 'interrupted', last_error: reason })
    .where('state', '=', 'sending')
    .where('lease_until', '<=', isoAt(now))
    .returning('id')
    .execute()
  return rows.map((row) => Number(row.id))
}

export interface MailClaim {
  now: number
  /** How long the claimed messages are this claimer's alone. */
  leaseMs: number
  /** At most this many. */
  limit: number
}

/**
 * Takes up to `limit` due messages, oldest first, into `sending` for `leaseMs`, counting the
 * attempt. The state is checked again on the row itself: on PostgreSQL a claimer that waited for
 * another's update of the row sees it `sending` and leaves it; on SQLite claims run one at a time.
 */
export async function claimDueMail(db: Db, { now, leaseMs, limit }: MailClaim): Promise<MailRow[]> {
  const at = isoAt(now)
  const due = db
    .selectFrom('mail_outbox')
    .select('id')
    .where('state', '=', 'pending')
    .where('next_attempt_at', '<=', at)
    .orderBy('next_attempt_at')
    .orderBy('id')
    .limit(limit)
  const rows = await db
    .updateTable('mail_outbox')
    .set((eb) => ({
      state: 'sending',
      lease_until: isoAt(now + leaseMs),
      next_attempt_at: null,
      attempts: eb('attempts', '+', 1),
    }))
    .where('id', 'in', due)
    .where('state', '=', 'pending')
    .where('next_attempt_at', '<=', at)
    .returningAll()
    .execute()
  return rows.map(mailRow).sort((a, b) => a.id - b.id)
}

export interface MailOutcome {
  state: Exclude<MailState, 'sending'>
  nextAttemptAt: number | null
  error: string | null
  sentAt: number | null
  messageId: string | null
}

/**
 * Writes a claimed message's outcome, if the row is still that claim's: `sending` under its lease,
 * or `interrupted` by a lease that ran out meanwhile (what the sender learnt is the truth). A row
 * an operator has put back in the queue since is left alone. The lease goes with it, so no later
 * write of the same claim matches. Resolves to whether it was written.
 */
export async function recordMailOutcome(db: Db, claimed: MailRow, outcome: MailOutcome): Promise<boolean> {
  const result = await db
    .updateTable('mail_outbox')
    .set({
      state: outcome.state,
      lease_until: null,
      next_attempt_at: outcome.nextAttemptAt === null ? null : isoAt(outcome.nextAttemptAt),
      last_error: outcome.error,
      sent_at: outcome.sentAt === null ? null : isoAt(outcome.sentAt),
      message_id: outcome.messageId,
    })
    .where('id', '=', claimed.id)
    .where('lease_until', '=', claimed.lease_until)
    .where('state', 'in', ['sending', 'interrupted'])
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

/**
 * Puts `row`, interrupted or failed, back in the queue, due at once with a fresh set of attempts,
 * if it is still in the state it was read in; resolves to whether it was.
 */
export async function requeueMail(db: Db, row: Pick<MailRow, 'id' | 'state'>, now: number): Promise<boolean> {
  if (row.state !== 'interrupted' && row.state !== 'failed') return false
  const result = await db
    .updateTable('mail_outbox')
    .set({ state: 'pending', next_attempt_at: isoAt(now), lease_until: null, attempts: 0 })
    .where('id', '=', row.id)
    .where('state', '=', row.state)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

export async function findMail(db: Db, id: number): Promise<MailRow | undefined> {
  const row = await db.selectFrom('mail_outbox').selectAll().where('id', '=', id).executeTakeFirst()
  return row === undefined ? undefined : mailRow(row)
}

/** One page of the outbox, newest first, before the message `before`; `next` when older ones follow. */
export async function pageOutbox(
  db: Db,
  page: { before?: number | undefined; limit: number },
): Promise<{ rows: MailRow[]; next: number | null }> {
  const rows = await db
    .selectFrom('mail_outbox')
    .selectAll()
    .$if(page.before !== undefined, (q) => q.where('id', '<', page.before!))
    .orderBy('id', 'desc')
    .limit(page.limit + 1)
    .execute()
  return keysetPage(rows.map(mailRow), page.limit)
}

/** How many messages are in each state (states with none left out). */
export async function countMailByState(db: Db): Promise<Partial<Record<MailState, number>>> {
  const rows = await db
    .selectFrom('mail_outbox')
    .select(['state', (eb) => eb.fn.countAll<number | string>().as('n')])
    .groupBy('state')
    .execute()
  return Object.fromEntries(rows.map((row) => [row.state, Number(row.n)]))
}

/** Deletes the messages queued before `before` (an ISO time) that are sent, failed or interrupted; returns how many. */
export async function deleteEndedMail(db: Db, before: string): Promise<number> {
  const deleted = await db
    .deleteFrom('mail_outbox')
    .where('state', 'in', ['sent', 'failed', 'interrupted'])
    .where('created_at', '<', before)
    .executeTakeFirst()
  return Number(deleted.numDeletedRows)
}

/** How many messages of `kind` were queued for `recipient` since `since`. */
export async function countMailTo(db: Db, recipient: string, kind: string, since: number): Promise<number> {
  const row = await db
    .selectFrom('mail_outbox')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('recipient', '=', recipient)
    .where('kind', '=', kind)
    .where('created_at', '>', isoAt(since))
    .executeTakeFirstOrThrow()
  return Number(row.n)
}
