/**
 * Several operators with two roles (docs/accounts.md, "Operators"). An admin invites an address
 * as admin or operator by a link valid 7 days, used once, by that address only, which signs up a
 * new operator account (its second factor comes next, by the two-step gate); admins change roles
 * and remove operators, whose sessions end at once. There is always an admin: the last one can
 * neither be demoted nor removed. The CLI resets a lost second factor.
 *
 * Each change first locks the operator accounts (`lockOperators`), so what it read (who is an
 * admin, how many) holds until it commits, on PostgreSQL too; and writes its audit row in its
 * transaction.
 */
import type { Kysely } from 'kysely'
import { deletePasskeysOf } from '../storage/passkey-repository.js'
import { isoAt } from '../clock.js'
import { ConflictError, NotFoundError } from '../domain/errors.js'
import { OPERATOR_ROLE_NAMES, type OperatorRole, operatorRole } from '../domain/operator-roles.js'
import {
  createAccount,
  deleteSessionsOf,
  findAccountByEmail,
  markEmailVerified,
  normaliseEmail,
} from '../storage/account-repository.js'
import { recordAudit } from '../storage/audit-repository.js'
import {
  countPendingOperatorInvitations,
  createOperatorInvitation,
  deleteOperatorAccount,
  findOperatorInvitationByToken,
  lockOperators,
  markOperatorInvitationAccepted,
  revokePendingOperatorInvitations,
  setOperatorRole,
} from '../storage/operator-repository.js'
import type { AccountRow, Database, OperatorInvitationRow } from '../storage/tables.js'
import { inTransaction } from '../storage/transaction.js'
import { type HeldMailNotice, queueMail, recipientProblem } from './mail.js'
import { operatorInvitationMail } from './operator-invitation-mail.js'
import type { OperatorAudit } from './operator-action.js'
import { announceNotices, type NoticeContext, queueSecondFactorNotice } from './notices.js'
import { removeTotp } from './second-factor.js'

/** How long an invitation's link works. */
export const OPERATOR_INVITATION_LIFETIME_MS = 7 * 24 * 60 * 60 * 1000
/** Pending operator invitations at once: enough for a team running the service, not a mailing list. */
export const MAX_PENDING_OPERATOR_INVITATIONS = 20

/** The signed-in operator acting (its row will do). */
export interface OperatorActor {
  id: string
  email: string
}

export type OperatorRefusal =
  | 'not-admin'
  | 'last-admin'
  /** The address has an account already (an operator's or a partner's): an account is one or the other. */
  | 'already-account'
  | 'too-many-invitations'
  | 'bad-input'
  | 'not-pending'
  /** An invitation's link that does not work: its `detail` says why. */
  | 'link'

export class OperatorRefused extends ConflictError {
  override name = 'OperatorRefused'
  constructor(
    readonly reason: OperatorRefusal,
    message: string,
    /** For a link: unknown, used, revoked or expired. */
    readonly detail?: 'unknown' | 'used' | 'revoked' | 'expired',
  ) {
    super(message)
  }
}

const actorOf = (by: { email: string }) => `account:${by.email}`

type Locked = Awaited<ReturnType<typeof lockOperators>>

/** The operators, locked, if `by` is an admin among them; OperatorRefused if not. */
async function asAdmin(trx: Kysely<Database>, by: OperatorActor, what: string): Promise<Locked> {
  const operators = await lockOperators(trx)
  if (operators.find((operator) => operator.id === by.id)?.role !== 'admin')
    throw new OperatorRefused('not-admin', `Only an operator admin can ${what}.`)
  return operators
}

function operatorIn(operators: Locked, accountId: string): Locked[number] {
  const found = operators.find((operator) => operator.id === accountId)
  if (found === undefined) throw new NotFoundError('there is no such operator')
  return found
}

/** Refuses to take away the last admin. */
function keepAnAdmin(operators: Locked, target: Locked[number], what: string): void {
  if (target.role === 'admin' && operators.filter((operator) => operator.role === 'admin').length <= 1)
    throw new OperatorRefused('last-admin', `The service needs an operator admin: make another one before ${what}.`)
}

export interface OperatorInvitationSent {
  id: string
  email: string
  role: OperatorRole
  expiresAt: string
  replaced: string[]
  mailId: number
}

/**
 * An admin invites an address that has no account as `role`: a pending invitation to the same
 * address is replaced. The mail is queued in the same transaction; `held` announces it after.
 */
export async function inviteOperator(
  db: Kysely<Database>,
  invitation: { email: string; role: string },
  by: OperatorActor,
  now: number,
  options: { publicUrl: string; held?: HeldMailNotice },
): Promise<OperatorInvitationSent> {
  const email = normaliseEmail(invitation.email)
  const problem = recipientProblem(email)
  if (problem !== null) throw new OperatorRefused('bad-input', problem)
  const role = operatorRole(invitation.role)
  if (role === undefined) throw new OperatorRefused('bad-input', 'Choose operator admin or operator.')
  const { sent, mail } = await inTransaction(db, async (trx) => {
    await asAdmin(trx, by, 'invite operators')
    if ((await findAccountByEmail(trx, email)) !== undefined)
      throw new OperatorRefused(
        'already-account',
        `${email} has an account already. An account is either an operator's or a partner's: invite another address.`,
      )
    const replaced = await revokePendingOperatorInvitations(trx, { email }, now)
    if ((await countPendingOperatorInvitations(trx, now)) >= MAX_PENDING_OPERATOR_INVITATIONS)
      throw new OperatorRefused(
        'too-many-invitations',
        `${MAX_PENDING_OPERATOR_INVITATIONS} operator invitations are waiting: revoke one, or wait until they are ` +
          'used or expire.',
      )
    const invite = { email, role, invitedBy: by.email }
    const { row, token } = await createOperatorInvitation(trx, invite, now, OPERATOR_INVITATION_LIFETIME_MS)
    const link = `${options.publicUrl}/dashboard/invitations/operator?token=${encodeURIComponent(token)}`
    const mail = operatorInvitationMail({ to: email, role, invitedBy: by.email, link, expiresAt: row.expires_at })
    const mailId = await queueMail(trx, mail, now)
    const detail = { invitation: row.id, email, role, replaced }
    await recordAudit(trx, { actor: actorOf(by), action: 'operator.invite', target: `operator:${email}`, detail }, now)
    const sent: OperatorInvitationSent = { id: row.id, email, role, expiresAt: row.expires_at, replaced, mailId }
    return { sent, mail }
  })
  options.held?.({ id: sent.mailId, kind: mail.kind, subject: mail.subject, link: mail.link })
  return sent
}

/** Why an invitation's link does not work now, or undefined when it does. */
export function operatorInvitationProblem(
  invitation: OperatorInvitationRow | undefined,
  now: number,
): OperatorRefused | undefined {
  const refused = (detail: 'unknown' | 'used' | 'revoked' | 'expired', message: string) =>
    new OperatorRefused('link', message, detail)
  if (invitation === undefined)
    return refused(
      'unknown',
      'This invitation link is not valid: check that the whole link was opened, or ask an operator admin ' +
        'for a new one.',
    )
  if (invitation.accepted_at !== null) return refused('used', 'This invitation has already been used: sign in.')
  if (invitation.revoked_at !== null)
    return refused('revoked', 'This invitation was withdrawn or replaced: ask an operator admin for a new one.')
  if (invitation.expires_at <= isoAt(now))
    return refused(
      'expired',
      'This invitation has expired (links work for 7 days): ask an operator admin for a new one.',
    )
  return undefined
}

/**
 * The invitation's link is used: a new operator account with the invited address (proven by the
 * link) and role, and the password its holder chose. Used once: of two acceptances at once, one
 * creates the account and the other finds the link used.
 */
export async function acceptOperatorInvitation(
  db: Kysely<Database>,
  token: string,
  passwordHash: string,
  now: number,
): Promise<AccountRow> {
  return inTransaction(db, async (trx) => {
    await lockOperators(trx)
    const invitation = await findOperatorInvitationByToken(trx, token)
    const problem = operatorInvitationProblem(invitation, now)
    if (problem !== undefined || invitation === undefined) throw problem
    if ((await findAccountByEmail(trx, invitation.email)) !== undefined)
      throw new OperatorRefused(
        'already-account',
        `${invitation.email} has an account already: sign in with it, or ask an operator admin to invite ` +
          'another address.',
      )
    if (!(await markOperatorInvitationAccepted(trx, invitation.id, now)))
      throw new OperatorRefused('link', 'This invitation has already been used: sign in.', 'used')
    const account = await createAccount(
      trx,
      { email: invitation.email, passwordHash, role: 'operator', operatorRole: invitation.role },
      now,
    )
    await markEmailVerified(trx, account.id, account.email, now)
    const detail = {
      invitation: invitation.id,
      email: account.email,
      role: invitation.role,
      invitedBy: invitation.invited_by,
    }
    await recordAudit(
      trx,
      { actor: actorOf(account), action: 'operator.join', target: `account:${account.id}`, detail },
      now,
    )
    return { ...account, email_verified_at: isoAt(now) }
  })
}

/** An admin withdraws a pending invitation; its link stops working at once. */
export async function revokeOperatorInvitation(
  db: Kysely<Database>,
  invitationId: string,
  by: OperatorActor,
  now: number,
): Promise<void> {
  await inTransaction(db, async (trx) => {
    await asAdmin(trx, by, 'revoke invitations')
    const [revoked] = await revokePendingOperatorInvitations(trx, { id: invitationId }, now)
    if (revoked === undefined)
      throw new OperatorRefused('not-pending', 'This invitation is no longer pending: it was used, revoked or expired.')
    const entry = { action: 'operator.invitation-revoke', target: `operator-invitation:${revoked}`, detail: {} }
    await recordAudit(trx, { actor: actorOf(by), ...entry }, now)
  })
}

/** An admin changes an operator's role (its own too); false when it already was `role`. */
export async function changeOperatorRole(
  db: Kysely<Database>,
  accountId: string,
  role: string,
  by: OperatorActor,
  now: number,
): Promise<boolean> {
  const to = operatorRole(role)
  if (to === undefined) throw new OperatorRefused('bad-input', 'Choose operator admin or operator.')
  return inTransaction(db, async (trx) => {
    const operators = await asAdmin(trx, by, 'change roles')
    const target = operatorIn(operators, accountId)
    if (target.role === to) return false
    keepAnAdmin(operators, target, `making the last one ${OPERATOR_ROLE_NAMES[to]}`)
    await setOperatorRole(trx, accountId, to)
    const detail = { email: target.email, from: target.role, to }
    await recordAudit(trx, { actor: actorOf(by), action: 'operator.role', target: `account:${accountId}`, detail }, now)
    return true
  })
}

/** What a removal ended. */
export interface OperatorRemoved {
  email: string
  role: OperatorRole
  sessionsEnded: number
}

/** An admin removes an operator (itself too, unless the last admin): the account goes, its sessions at once. */
export async function removeOperator(
  db: Kysely<Database>,
  accountId: string,
  by: OperatorActor,
  now: number,
): Promise<OperatorRemoved> {
  return inTransaction(db, async (trx) => {
    const operators = await asAdmin(trx, by, 'remove operators')
    const target = operatorIn(operators, accountId)
    keepAnAdmin(operators, target, 'removing the last one')
    const { sessions } = await deleteOperatorAccount(trx, accountId)
    const detail = { email: target.email, role: target.role, sessionsEnded: sessions }
    await recordAudit(
      trx,
      { actor: actorOf(by), action: 'operator.remove', target: `account:${accountId}`, detail },
      now,
    )
    return { email: target.email, role: target.role, sessionsEnded: sessions }
  })
}

/** What a reset of an operator's second factor did. */
export interface SecondFactorReset {
  account: AccountRow
  /** False when the operator had no second factor (its sessions end all the same). */
  removed: boolean
  sessionsEnded: number
}

/**
 * For the day an operator's phone is lost (`curriculum operator reset-2fa`): removes its
 * authenticator, recovery codes and passkeys and ends its sessions, in `db` (the CLI's audited transaction);
 * at its next sign-in the two-step gate makes it enrol again. NotFoundError for any other address.
 */
export async function resetOperatorSecondFactor(
  db: Kysely<Database>,
  email: string,
  by: OperatorAudit,
  now: number,
  notices?: NoticeContext,
): Promise<SecondFactorReset> {
  const { reset, queued } = await inTransaction(db, async (trx) => {
    const account = await findAccountByEmail(trx, email)
    if (account === undefined || account.role !== 'operator')
      throw new NotFoundError(`there is no operator account with the address ${normaliseEmail(email)}`)
    const totp = await removeTotp(trx, account, now, by)
    // Its passkeys too: the device that was lost may hold one.
    const passkeys = await deletePasskeysOf(trx, account.id)
    const sessionsEnded = await deleteSessionsOf(trx, account.id)
    const removed = totp || passkeys > 0
    // One security notice for the whole reset (removeTotp above is given none), in its transaction.
    const change = { added: false, factor: { kind: 'reset' as const }, twoStep: false }
    const queued = removed && notices ? [await queueSecondFactorNotice(trx, account, change, notices, now)] : []
    return { reset: { account, removed, sessionsEnded }, queued }
  })
  announceNotices(notices?.held, queued)
  return reset
}
