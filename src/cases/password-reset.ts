/**
 * "Forgot your password?": a link valid for an hour, once, to the account's address. Asking
 * answers the same whether or not the address has an account (the dashboard does this work after
 * answering); using the link sets the new password, ends every session of the account, retires
 * its other links, and counts as proof of the address.
 */
import type { Kysely } from 'kysely'
import {
  deleteSessionsOf,
  findAccount,
  findAccountByEmail,
  lockAccount,
  markEmailVerified,
  setPasswordHash,
} from '../storage/account-repository.js'
import { retireAccountLinks } from '../storage/account-link-repository.js'
import { recordAudit } from '../storage/audit-repository.js'
import type { Database } from '../storage/tables.js'
import { inTransaction } from '../storage/transaction.js'
import { type LinkCheck, issueAccountLink, spendAccountLink } from './account-links.js'
import { passwordChangedMail, passwordResetMail } from './account-mail.js'
import { announceMail, type HeldMailNotice, type OutgoingMail, queueMail } from './mail.js'

export type ResetRequested = 'queued' | 'no-account' | 'limited'

/** The page where a password reset is asked for, named in messages about the account. */
export const forgotPasswordPage = (publicUrl: string) => `${publicUrl}/dashboard/forgot-password`

/** Mails a reset link to the account of `email`, if there is one and it had fewer than its hour's links. */
export async function requestPasswordReset(
  db: Kysely<Database>,
  email: string,
  publicUrl: string,
  now: number,
  held?: HeldMailNotice,
): Promise<ResetRequested> {
  const found = await findAccountByEmail(db, email)
  if (found === undefined) return 'no-account'
  const queued = await inTransaction(db, async (trx) => {
    await lockAccount(trx, found.id)
    const account = await findAccount(trx, found.id)
    if (account === undefined) return 'no-account' as const
    const purpose = 'password-reset' as const
    const link = await issueAccountLink(trx, { accountId: account.id, purpose, email: account.email }, publicUrl, now)
    if (link === null) return 'limited' as const
    const mail = passwordResetMail(account.email, link)
    return { id: await queueMail(trx, mail, now), mail }
  })
  if (typeof queued === 'string') return queued
  announceMail(held, queued.id, queued.mail)
  return 'queued'
}

export interface PasswordReset {
  token: string
  passwordHash: string
  publicUrl: string
}

/** Uses a reset link; of two uses at once, or of two links of one account, exactly one succeeds. */
export async function resetPassword(
  db: Kysely<Database>,
  reset: PasswordReset,
  now: number,
  held?: HeldMailNotice,
): Promise<LinkCheck> {
  const done = await inTransaction(db, async (trx) => {
    const spent = await spendAccountLink(trx, reset.token, 'password-reset', now)
    if (!spent.ok) return { check: spent }
    const { account_id: accountId, email } = spent.link
    await setPasswordHash(trx, accountId, reset.passwordHash)
    await markEmailVerified(trx, accountId, email, now)
    await retireAccountLinks(trx, accountId, ['verify-email', 'password-reset', 'email-change'], now)
    const ended = await deleteSessionsOf(trx, accountId)
    await recordAudit(
      trx,
      {
        actor: `account:${email}`,
        action: 'account.password-reset',
        target: `account:${accountId}`,
        detail: { sessionsEnded: ended },
      },
      now,
    )
    const mail: OutgoingMail = passwordChangedMail(email, forgotPasswordPage(reset.publicUrl))
    return { check: spent, id: await queueMail(trx, mail, now), mail }
  })
  if (done.id !== undefined) announceMail(held, done.id, done.mail)
  return done.check
}
