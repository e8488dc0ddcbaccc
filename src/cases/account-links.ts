/**
 * The links mailed to an account, their lifetimes and limits (docs/accounts.md): each is single
 * use, stored as a hash, and valid for a fixed time; an account is sent at most a few of each
 * purpose an hour, counted in the database so that every instance counts the same. Callers
 * issue and use links inside a transaction holding the account's lock (lockAccount), so that
 * neither the limits nor the single use give way when requests race.
 */
import type { Kysely } from 'kysely'
import { isoAt } from '../clock.js'
import { isBearerToken } from '../domain/bearer-token.js'
import { deleteExpiredSessions, lockAccount } from '../storage/account-repository.js'
import { deleteExpiredChallenges } from '../storage/passkey-repository.js'
import {
  countAccountLinksSince,
  deleteExpiredAccountLinks,
  findAccountLink,
  insertAccountLink,
  useAccountLink,
} from '../storage/account-link-repository.js'
import type { AccountLinkPurpose, AccountLinkRow, Database } from '../storage/tables.js'

const HOUR_MS = 3_600_000

export interface LinkRule {
  lifetimeMs: number
  /** Links of this purpose an account may be sent in any hour. */
  perHour: number
  /** The dashboard page the link opens. */
  path: string
}

export const LINK_RULES: Readonly<Record<AccountLinkPurpose, LinkRule>> = {
  'verify-email': { lifetimeMs: 24 * HOUR_MS, perHour: 3, path: '/dashboard/verify-email' },
  'password-reset': { lifetimeMs: HOUR_MS, perHour: 3, path: '/dashboard/reset-password' },
  'email-change': { lifetimeMs: 24 * HOUR_MS, perHour: 3, path: '/dashboard/account/confirm-email' },
}

/** Why a link does not work: never seen, used (or retired by a later event), or out of time. */
export type LinkProblem = 'unknown' | 'used' | 'expired'

export type LinkCheck = { ok: true; link: AccountLinkRow } | { ok: false; problem: LinkProblem }

/** Whether `token` is a live link of `purpose`, without using it (the page that asks for confirmation). */
export async function checkAccountLink(
  db: Kysely<Database>,
  token: string,
  purpose: AccountLinkPurpose,
  now: number,
): Promise<LinkCheck> {
  const link = isBearerToken(token) ? await findAccountLink(db, token) : undefined
  if (link === undefined || link.purpose !== purpose) return { ok: false, problem: 'unknown' }
  if (link.used_at !== null) return { ok: false, problem: 'used' }
  if (link.expires_at <= isoAt(now)) return { ok: false, problem: 'expired' }
  return { ok: true, link }
}

/**
 * Uses the link inside `trx`: ok for exactly one of concurrent callers, and then never again.
 * The account's lock is taken first, as every link's user takes it, so that two links of one
 * account used at once queue behind each other instead of deadlocking.
 */
export async function spendAccountLink(
  trx: Kysely<Database>,
  token: string,
  purpose: AccountLinkPurpose,
  now: number,
): Promise<LinkCheck> {
  const check = await checkAccountLink(trx, token, purpose, now)
  if (!check.ok) return check
  await lockAccount(trx, check.link.account_id)
  return (await useAccountLink(trx, token, purpose, now)) ? check : { ok: false, problem: 'used' }
}

/**
 * A new link's address (`publicUrl` followed by its page and token), or null when the account
 * has been sent its hour's worth already.
 */
export async function issueAccountLink(
  trx: Kysely<Database>,
  link: { accountId: string; purpose: AccountLinkPurpose; email: string },
  publicUrl: string,
  now: number,
): Promise<string | null> {
  const rule = LINK_RULES[link.purpose]
  if ((await countAccountLinksSince(trx, link.accountId, link.purpose, now - HOUR_MS)) >= rule.perHour) return null
  const token = await insertAccountLink(trx, { ...link, lifetimeMs: rule.lifetimeMs }, now)
  return `${publicUrl}${rule.path}?token=${token}`
}

/**
 * Deletes ended sessions, used passkey challenges once expired, and links a day after they
 * expired (kept that long to say "expired", not "unknown").
 */
export async function pruneAccountTokens(db: Kysely<Database>, now: number): Promise<void> {
  await deleteExpiredSessions(db, now)
  await deleteExpiredAccountLinks(db, now - 24 * HOUR_MS)
  await deleteExpiredChallenges(db, now)
}
