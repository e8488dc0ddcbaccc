/**
 * Members of a partner organisation and their roles (docs/accounts.md). An owner invites an
 * address by a link valid 7 days, used once, by the account with that address only; owners change
 * roles and remove members, and a removed member's sessions end at once; a member may leave. An
 * organisation always keeps an owner: the last one can neither leave, be demoted nor be removed.
 *
 * Each change first locks the organisation's members (`lockOrganisationMembers`), so the rules read
 * after it hold until the commit, on PostgreSQL too; and writes its audit row in its transaction.
 * The memberships table is the truth; `accounts.organisation_id`, which the partner pages still
 * read, is set when an application is approved and cleared when its account leaves.
 */
import type { Kysely } from 'kysely'
import { isoAt } from '../clock.js'
import { ConflictError, NotFoundError } from '../domain/errors.js'
import { type MemberRole, may, memberRole } from '../domain/member-roles.js'
import { organisationById } from '../storage/access-repository.js'
import { deleteSessionsOf, findAccount, normaliseEmail, setAccountOrganisation } from '../storage/account-repository.js'
import { recordAudit } from '../storage/audit-repository.js'
import {
  countPendingInvitations,
  createInvitation,
  findInvitation,
  findInvitationByToken,
  markInvitationAccepted,
  revokePendingFor,
  revokePendingInvitation,
} from '../storage/invitation-repository.js'
import {
  clearAccountOrganisation,
  countOwners,
  deleteMembership,
  insertMembership,
  lockOrganisationMembers,
  memberByEmail,
  roleIn,
  setMembershipRole,
  setRequireSecondFactor,
} from '../storage/membership-repository.js'
import type { Database, OrganisationRow } from '../storage/tables.js'
import { inTransaction } from '../storage/transaction.js'
import { invitationMail } from './invitation-mail.js'
import { hasSecondFactor } from './second-factor.js'
import { type HeldMailNotice, queueMail, recipientProblem } from './mail.js'

/** How long an invitation's link works. */
export const INVITATION_LIFETIME_MS = 7 * 24 * 60 * 60 * 1000
/** Pending invitations an organisation may have at once: enough for a team, not a mailing list. */
export const MAX_PENDING_INVITATIONS = 20

/** The signed-in account acting (its row will do). */
export interface MemberActor {
  id: string
  email: string
}

/** Why a change to the members was refused; each with a message a person can act on. */
export type MemberRefusal =
  | 'not-owner'
  | 'last-owner'
  | 'already-member'
  | 'too-many-invitations'
  /** An address that is not one mailbox, or a role that is none of the three. */
  | 'bad-input'
  /** An invitation revoked once it was used, revoked or expired. */
  | 'not-pending'
  /** An owner requiring a second factor of the members without one of its own. */
  | 'needs-own-factor'

export class MemberRefused extends ConflictError {
  override name = 'MemberRefused'
  constructor(
    readonly reason: MemberRefusal,
    message: string,
  ) {
    super(message)
  }
}

/** Why an invitation's link did not make its opener a member. */
export type InvitationRefusal = 'unknown' | 'used' | 'revoked' | 'expired' | 'other-address' | 'operator' | 'member'

export class InvitationRefused extends ConflictError {
  override name = 'InvitationRefused'
  constructor(
    readonly reason: InvitationRefusal,
    message: string,
  ) {
    super(message)
  }
}

const actorOf = (by: MemberActor) => `account:${by.email}`

/** The organisation, its members locked until the transaction ends; NotFoundError if there is none. */
async function lockedOrganisation(trx: Kysely<Database>, organisationId: string): Promise<OrganisationRow> {
  const organisation = (await lockOrganisationMembers(trx, organisationId))
    ? await organisationById(trx, organisationId)
    : undefined
  if (organisation === undefined) throw new NotFoundError(`there is no organisation ${organisationId}`)
  return organisation
}

/** The locked organisation, if `by` may manage its members (an owner); MemberRefused if not. */
async function managedOrganisation(
  trx: Kysely<Database>,
  organisationId: string,
  by: MemberActor,
  what: string,
): Promise<OrganisationRow> {
  const organisation = await lockedOrganisation(trx, organisationId)
  if (!may(await roleIn(trx, organisationId, by.id), 'members.manage'))
    throw new MemberRefused('not-owner', `Only an owner of ${organisation.name} can ${what}.`)
  return organisation
}

/** The member's role and address; NotFoundError when the account is not a member. */
async function memberOf(
  trx: Kysely<Database>,
  organisation: OrganisationRow,
  accountId: string,
): Promise<{ role: MemberRole; email: string }> {
  const role = await roleIn(trx, organisation.id, accountId)
  const account = role === undefined ? undefined : await findAccount(trx, accountId)
  if (role === undefined || account === undefined)
    throw new NotFoundError(`that account is not a member of ${organisation.name}`)
  return { role, email: account.email }
}

/** Refuses to take away the organisation's last owner. */
async function keepAnOwner(trx: Kysely<Database>, organisation: OrganisationRow, role: MemberRole, what: string) {
  if (role === 'owner' && (await countOwners(trx, organisation.id)) <= 1)
    throw new MemberRefused(
      'last-owner',
      `${organisation.name} needs an owner: make another member an owner before ${what}.`,
    )
}

export interface Invitation {
  organisationId: string
  email: string
  role: MemberRole
}

/** What an invitation came to; the token went into the mail alone. */
export interface InvitationSent {
  id: string
  email: string
  role: MemberRole
  expiresAt: string
  /** The invitations to the same address it replaced. */
  replaced: string[]
  mailId: number
}

/**
 * An owner invites an address (not yet a member) as `role`: a pending invitation to the same
 * address is replaced, and at most MAX_PENDING_INVITATIONS are pending. The mail is queued in the
 * same transaction; `held` announces it after the commit.
 */
export async function inviteMember(
  db: Kysely<Database>,
  invitation: Invitation,
  by: MemberActor,
  now: number,
  options: { publicUrl: string; held?: HeldMailNotice },
): Promise<InvitationSent> {
  const email = normaliseEmail(invitation.email)
  const problem = recipientProblem(email)
  if (problem !== null) throw new MemberRefused('bad-input', problem)
  const role = memberRole(invitation.role)
  if (role === undefined) throw new MemberRefused('bad-input', 'Choose owner, developer or viewer.')
  const { sent, mail } = await inTransaction(db, async (trx) => {
    const organisation = await managedOrganisation(trx, invitation.organisationId, by, 'invite members')
    if ((await memberByEmail(trx, organisation.id, email)) !== undefined)
      throw new MemberRefused('already-member', `${email} is already a member of ${organisation.name}.`)
    const replaced = await revokePendingFor(trx, organisation.id, email, now)
    if ((await countPendingInvitations(trx, organisation.id, now)) >= MAX_PENDING_INVITATIONS)
      throw new MemberRefused(
        'too-many-invitations',
        `${organisation.name} has ${MAX_PENDING_INVITATIONS} invitations waiting: revoke one, or wait until ` +
          'they are accepted or expire, before inviting someone else.',
      )
    const invite = { organisationId: organisation.id, email, role, invitedBy: by.id }
    const { row, token } = await createInvitation(trx, invite, now, INVITATION_LIFETIME_MS)
    const link = `${options.publicUrl}/dashboard/invitations/accept?token=${encodeURIComponent(token)}`
    const mail = invitationMail({
      to: email,
      organisation: organisation.name,
      role,
      invitedBy: by.email,
      link,
      expiresAt: row.expires_at,
    })
    const mailId = await queueMail(trx, mail, now)
    const detail = { invitation: row.id, email, role, replaced }
    await recordAudit(
      trx,
      { actor: actorOf(by), action: 'invitation.send', target: `organisation:${organisation.id}`, detail },
      now,
    )
    const sent: InvitationSent = { id: row.id, email, role, expiresAt: row.expires_at, replaced, mailId }
    return { sent, mail }
  })
  options.held?.({ id: sent.mailId, kind: mail.kind, subject: mail.subject, link: mail.link })
  return sent
}

export interface Joined {
  organisationId: string
  organisation: string
  role: MemberRole
}

/**
 * The signed-in account `by` accepts the invitation its link's token names: only if it is pending
 * (neither used, revoked nor expired) and `by`'s address is the one invited. Used once: of two
 * acceptances at once, the second finds it used.
 */
export async function acceptInvitation(
  db: Kysely<Database>,
  token: string,
  by: MemberActor,
  now: number,
): Promise<Joined> {
  return inTransaction(db, async (trx) => {
    const found = await findInvitationByToken(trx, token)
    if (found === undefined)
      throw new InvitationRefused(
        'unknown',
        'This invitation link is not valid: check that the whole link was opened, or ask an owner for a new one.',
      )
    const organisation = await lockedOrganisation(trx, found.organisation_id)
    // Read again under the lock: a revocation or an acceptance may have committed meanwhile.
    const invitation = (await findInvitationByToken(trx, token)) ?? found
    const refusal = invitationRefusal(invitation, organisation, now)
    if (refusal !== undefined) throw refusal
    const account = await findAccount(trx, by.id)
    if (account === undefined) throw new NotFoundError('there is no such account')
    if (account.role !== 'partner')
      throw new InvitationRefused('operator', 'An operator account cannot join a partner organisation.')
    if (account.email !== invitation.email)
      throw new InvitationRefused(
        'other-address',
        'This invitation was sent to another e-mail address: sign in with the account of that address to accept it.',
      )
    if ((await roleIn(trx, organisation.id, account.id)) !== undefined)
      throw new InvitationRefused('member', `You are already a member of ${organisation.name}.`)
    if (!(await markInvitationAccepted(trx, invitation.id, now)))
      throw new InvitationRefused('used', 'This invitation has already been used.')
    await insertMembership(trx, { organisationId: organisation.id, accountId: account.id, role: invitation.role }, now)
    // An account in no organisation yet starts in the one it joined; others switch on their Account page.
    if (account.organisation_id === null) await setAccountOrganisation(trx, account.id, organisation.id)
    const detail = { invitation: invitation.id, email: account.email, role: invitation.role }
    await recordAudit(
      trx,
      { actor: actorOf(by), action: 'invitation.accept', target: `organisation:${organisation.id}`, detail },
      now,
    )
    return { organisationId: organisation.id, organisation: organisation.name, role: invitation.role }
  })
}

function invitationRefusal(
  invitation: { accepted_at: string | null; revoked_at: string | null; expires_at: string },
  organisation: OrganisationRow,
  now: number,
): InvitationRefused | undefined {
  if (invitation.accepted_at !== null) return new InvitationRefused('used', 'This invitation has already been used.')
  if (invitation.revoked_at !== null)
    return new InvitationRefused('revoked', `This invitation was withdrawn: ask an owner of ${organisation.name}.`)
  if (invitation.expires_at <= isoAt(now))
    return new InvitationRefused(
      'expired',
      `This invitation has expired (links work for 7 days): ask an owner of ${organisation.name} for a new one.`,
    )
  return undefined
}

/** An owner withdraws a pending invitation; its link stops working at once. */
export async function revokeInvitation(
  db: Kysely<Database>,
  organisationId: string,
  invitationId: string,
  by: MemberActor,
  now: number,
): Promise<void> {
  await inTransaction(db, async (trx) => {
    const organisation = await managedOrganisation(trx, organisationId, by, 'revoke invitations')
    const invitation = await findInvitation(trx, organisation.id, invitationId)
    if (invitation === undefined) throw new NotFoundError(`${organisation.name} has no such invitation`)
    if (!(await revokePendingInvitation(trx, invitation.id, now)))
      throw new MemberRefused('not-pending', 'This invitation is no longer pending: it was used, revoked or expired.')
    const detail = { invitation: invitation.id, email: invitation.email, role: invitation.role }
    await recordAudit(
      trx,
      { actor: actorOf(by), action: 'invitation.revoke', target: `organisation:${organisation.id}`, detail },
      now,
    )
  })
}

/** An owner changes a member's role (an owner's own too); false when it already was `role`. */
export async function changeMemberRole(
  db: Kysely<Database>,
  organisationId: string,
  accountId: string,
  role: MemberRole,
  by: MemberActor,
  now: number,
): Promise<boolean> {
  if (memberRole(role) === undefined) throw new MemberRefused('bad-input', 'Choose owner, developer or viewer.')
  return inTransaction(db, async (trx) => {
    const organisation = await managedOrganisation(trx, organisationId, by, 'change roles')
    const member = await memberOf(trx, organisation, accountId)
    if (member.role === role) return false
    await keepAnOwner(trx, organisation, member.role, 'changing the role of the last one')
    await setMembershipRole(trx, organisation.id, accountId, role)
    const detail = { member: member.email, from: member.role, to: role }
    await recordAudit(
      trx,
      { actor: actorOf(by), action: 'member.role', target: `organisation:${organisation.id}`, detail },
      now,
    )
    return true
  })
}

/** What a removal ended. */
export interface Removed {
  email: string
  role: MemberRole
  /** Sessions of the removed account ended (all of them, whatever organisation they were in). */
  sessionsEnded: number
}

/**
 * An owner removes a member: the membership goes, every session of the account ends at once (it
 * signs in again to reach its other organisations), and `accounts.organisation_id` is cleared if it
 * named this organisation.
 */
export async function removeMember(
  db: Kysely<Database>,
  organisationId: string,
  accountId: string,
  by: MemberActor,
  now: number,
): Promise<Removed> {
  return inTransaction(db, async (trx) => {
    const organisation = await managedOrganisation(trx, organisationId, by, 'remove members')
    const member = await memberOf(trx, organisation, accountId)
    await keepAnOwner(trx, organisation, member.role, 'removing the last one')
    await deleteMembership(trx, organisation.id, accountId)
    await clearAccountOrganisation(trx, accountId, organisation.id)
    const sessionsEnded = await deleteSessionsOf(trx, accountId)
    const detail = { member: member.email, role: member.role, sessionsEnded }
    await recordAudit(
      trx,
      { actor: actorOf(by), action: 'member.remove', target: `organisation:${organisation.id}`, detail },
      now,
    )
    return { email: member.email, role: member.role, sessionsEnded }
  })
}

/** A member leaves the organisation (its sessions stay: it chose, and may belong to others). */
export async function leaveOrganisation(
  db: Kysely<Database>,
  organisationId: string,
  by: MemberActor,
  now: number,
): Promise<void> {
  await inTransaction(db, async (trx) => {
    const organisation = await lockedOrganisation(trx, organisationId)
    const member = await memberOf(trx, organisation, by.id)
    await keepAnOwner(trx, organisation, member.role, 'leaving')
    await deleteMembership(trx, organisation.id, by.id)
    await clearAccountOrganisation(trx, by.id, organisation.id)
    await recordAudit(
      trx,
      {
        actor: actorOf(by),
        action: 'member.leave',
        target: `organisation:${organisation.id}`,
        detail: { member: member.email, role: member.role },
      },
      now,
    )
  })
}

/**
 * Makes `organisationId` the one the account's partner pages show (for every session of the
 * account); false when the account is not a member of it.
 */
export async function switchOrganisation(
  db: Kysely<Database>,
  accountId: string,
  organisationId: string,
): Promise<boolean> {
  if ((await roleIn(db, organisationId, accountId)) === undefined) return false
  await setAccountOrganisation(db, accountId, organisationId)
  return true
}

/**
 * An owner requires a second factor of every member, or stops requiring it; audited. A member
 * without one is sent to enrol before any page of the organisation (dashboard/two-step-gate.ts).
 */
export async function requireSecondFactor(
  db: Kysely<Database>,
  organisationId: string,
  required: boolean,
  by: MemberActor,
  now: number,
): Promise<void> {
  await inTransaction(db, async (trx) => {
    const organisation = await lockedOrganisation(trx, organisationId)
    if (!may(await roleIn(trx, organisationId, by.id), 'organisation.settings'))
      throw new MemberRefused('not-owner', `Only an owner of ${organisation.name} can change its sign-in rules.`)
    // An owner who requires it has it: enabling it must not lock out the one who enabled it.
    if (required && !(await hasSecondFactor(trx, by.id)))
      throw new MemberRefused('needs-own-factor', 'Set up two-step sign-in for yourself first, on your Account page.')
    await setRequireSecondFactor(trx, organisationId, required)
    const entry = {
      actor: actorOf(by),
      action: 'organisation.two-step',
      target: `organisation:${organisationId}`,
      detail: { required },
    }
    await recordAudit(trx, entry, now)
  })
}
