/**
 * What the Account page changes: the password (after the current one was checked), the sign-in
 * address (through a link to the new one, with word to the old one), and the account's
 * sessions, one or all. Each change is in the audit log.
 */
import type { Kysely } from 'kysely'
import {
  changeEmail,
  deleteSessionById,
  deleteSessionsOf,
  findAccount,
  lockAccount,
  setPasswordHash,
} from '../storage/account-repository.js'
import { retireAccountLinks } from '../storage/account-link-repository.js'
import { recordAudit } from '../storage/audit-repository.js'
import type { AccountRow, Database } from '../storage/tables.js'
import { inTransaction } from '../storage/transaction.js'
import { type LinkCheck, issueAccountLink, spendAccountLink } from './account-links.js'
import { emailChangeMail, emailChangeNotice, passwordChangedMail } from './account-mail.js'
import { announceMail, type HeldMailNotice, type OutgoingMail, queueMail } from './mail.js'
import { forgotPasswordPage } from './password-reset.js'

const actorOf = (account: Pick<AccountRow, 'email'>) => `account:${account.email}`

/** Queues `mails` in `trx`; the returned function announces them once the transaction has committed. */
async function queueAll(trx: Kysely<Database>, mails: OutgoingMail[], now: number) {
  const ids: number[] = []
  for (const mail of mails) ids.push(await queueMail(trx, mail, now))
  return (held?: HeldMailNotice) => {
    for (const [i, id] of ids.entries()) announceMail(held, id, mails[i]!)
  }
}

/**
 * Sets a new password the account's owner chose, having given the current one. The account's
 * other sessions end (the one that changed it, `keepTokenHash`, stays), its reset links stop
 * working, and its address is told.
 */
export async function changePassword(
  db: Kysely<Database>,
  account: AccountRow,
  change: { passwordHash: string; keepTokenHash: string; publicUrl: string },
  now: number,
  held?: HeldMailNotice,
): Promise<number> {
  const { ended, announce } = await inTransaction(db, async (trx) => {
    await lockAccount(trx, account.id)
    await setPasswordHash(trx, account.id, change.passwordHash)
    await retireAccountLinks(trx, account.id, ['password-reset'], now)
    const ended = await deleteSessionsOf(trx, account.id, change.keepTokenHash)
    const target = `account:${account.id}`
    const detail = { otherSessionsEnded: ended }
    await recordAudit(trx, { actor: actorOf(account), action: 'account.password-changed', target, detail }, now)
    const mail = passwordChangedMail(account.email, forgotPasswordPage(change.publicUrl))
    return { ended, announce: await queueAll(trx, [mail], now) }
  })
  announce(held)
  return ended
}

/**
 * Mails a link to `newEmail` that makes it the account's address, and tells the current address;
 * false when the account had its hour's links. Whether another account has the new address is
 * not said here (the link's use says it), so the form tells nobody which addresses have accounts.
 */
export async function requestEmailChange(
  db: Kysely<Database>,
  account: AccountRow,
  newEmail: string,
  publicUrl: string,
  now: number,
  held?: HeldMailNotice,
): Promise<boolean> {
  const announce = await inTransaction(db, async (trx) => {
    await lockAccount(trx, account.id)
    const purpose = 'email-change' as const
    const link = await issueAccountLink(trx, { accountId: account.id, purpose, email: newEmail }, publicUrl, now)
    if (link === null) return undefined
    const target = `account:${account.id}`
    const detail = { to: newEmail }
    await recordAudit(trx, { actor: actorOf(account), action: 'account.email-change-asked', target, detail }, now)
    const mails = [
      emailChangeMail(newEmail, link),
      emailChangeNotice(account.email, newEmail, forgotPasswordPage(publicUrl)),
    ]
    return queueAll(trx, mails, now)
  })
  announce?.(held)
  return announce !== undefined
}

/**
 * Uses a change-of-address link: the account's address becomes the one the link was sent to,
 * verified. ConflictError (nothing changed, the link still usable) when another account has it.
 */
export function confirmEmailChange(db: Kysely<Database>, token: string, now: number): Promise<LinkCheck> {
  return inTransaction(db, async (trx) => {
    const spent = await spendAccountLink(trx, token, 'email-change', now)
    if (!spent.ok) return spent
    const { account_id: accountId, email } = spent.link
    const before = await findAccount(trx, accountId)
    await changeEmail(trx, accountId, email, now)
    await retireAccountLinks(trx, accountId, ['verify-email', 'password-reset', 'email-change'], now)
    const target = `account:${accountId}`
    const detail = { from: before?.email ?? null, to: email }
    await recordAudit(trx, { actor: `account:${email}`, action: 'account.email-changed', target, detail }, now)
    return spent
  })
}

/** Ends one of the account's sessions; false if it had ended already. */
export async function endSessionById(db: Kysely<Database>, account: AccountRow, id: string, now: number) {
  return inTransaction(db, async (trx) => {
    const ended = await deleteSessionById(trx, account.id, id)
    if (ended) {
      const entry = { actor: actorOf(account), action: 'account.session-ended', target: `account:${account.id}` }
      await recordAudit(trx, entry, now)
    }
    return ended
  })
}

/** Ends every session of the account, this one included ("sign out everywhere"); returns how many. */
export async function endEverySession(db: Kysely<Database>, account: AccountRow, now: number): Promise<number> {
  return inTransaction(db, async (trx) => {
    const ended = await deleteSessionsOf(trx, account.id)
    const target = `account:${account.id}`
    await recordAudit(
      trx,
      { actor: actorOf(account), action: 'account.signed-out-everywhere', target, detail: { ended } },
      now,
    )
    return ended
  })
}
