/**
 * E-mail verification: a link to the account's address proves it is theirs. The sandbox works
 * without it; applying for live access needs it (cases/applications.ts).
 */
import type { Kysely } from 'kysely'
import { findAccount, lockAccount, markEmailVerified } from '../storage/account-repository.js'
import { retireAccountLinks } from '../storage/account-link-repository.js'
import { recordAudit } from '../storage/audit-repository.js'
import type { Database } from '../storage/tables.js'
import { inTransaction } from '../storage/transaction.js'
import { type LinkCheck, issueAccountLink, spendAccountLink } from './account-links.js'
import { verificationMail } from './account-mail.js'
import { announceMail, type HeldMailNotice, queueMail } from './mail.js'

export type VerificationSent = 'queued' | 'verified-already' | 'limited'

/** Mails the account a verification link, unless its address is verified or it had its hour's links. */
export async function sendVerificationLink(
  db: Kysely<Database>,
  accountId: string,
  publicUrl: string,
  now: number,
  held?: HeldMailNotice,
): Promise<VerificationSent> {
  const sent = await inTransaction(db, async (trx) => {
    if (!(await lockAccount(trx, accountId))) return 'verified-already' as const
    const account = (await findAccount(trx, accountId))!
    if (account.email_verified_at !== null) return 'verified-already' as const
    const purpose = 'verify-email' as const
    const link = await issueAccountLink(trx, { accountId, purpose, email: account.email }, publicUrl, now)
    if (link === null) return 'limited' as const
    const mail = verificationMail(account.email, link)
    return { id: await queueMail(trx, mail, now), mail }
  })
  if (typeof sent === 'string') return sent
  announceMail(held, sent.id, sent.mail)
  return 'queued'
}

/**
 * Uses a verification link: the address it was sent to is verified if it is still the account's
 * (after a change of address, an old link verifies nothing and says it was replaced).
 */
export function verifyEmail(db: Kysely<Database>, token: string, now: number): Promise<LinkCheck> {
  return inTransaction(db, async (trx) => {
    const spent = await spendAccountLink(trx, token, 'verify-email', now)
    if (!spent.ok) return spent
    const { account_id: accountId, email } = spent.link
    if (!(await markEmailVerified(trx, accountId, email, now))) return { ok: false, problem: 'used' }
    await retireAccountLinks(trx, accountId, ['verify-email'], now)
    await recordAudit(
      trx,
      { actor: `account:${email}`, action: 'account.email-verified', target: `account:${accountId}` },
      now,
    )
    return spent
  })
}
