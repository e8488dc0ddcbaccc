/**
 * Members and roles of an organisation, on each engine: approval makes the applicant its owner; an
 * owner invites an address by a mailed link (7 days, once, that address only, at most 20 pending,
 * a new one replacing the address's pending one), changes roles and removes members (their sessions
 * end at once); a member leaves; every change is audited. The last owner can neither leave, be
 * demoted nor be removed, also when two owners act at the same moment.
 */
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { startSession } from '../../src/cases/accounts.js'
import { decideApplication, submitApplication } from '../../src/cases/applications.js'
import type { HeldMail } from '../../src/cases/mail.js'
import {
  acceptInvitation,
  changeMemberRole,
  INVITATION_LIFETIME_MS,
  InvitationRefused,
  type InvitationRefusal,
  inviteMember,
  leaveOrganisation,
  MAX_PENDING_INVITATIONS,
  type MemberActor,
  MemberRefused,
  type MemberRefusal,
  removeMember,
  revokeInvitation,
} from '../../src/cases/members.js'
import { NotFoundError } from '../../src/domain/errors.js'
import type { MemberRole } from '../../src/domain/member-roles.js'
import { createOrganisation } from '../../src/storage/access-repository.js'
import {
  accountForSession,
  createAccount,
  findAccount,
  markEmailVerified,
  setAccountOrganisation,
} from '../../src/storage/account-repository.js'
import { listAudit } from '../../src/storage/audit-repository.js'
import type { Storage } from '../../src/storage/connection.js'
import { invitationTokenHash, pendingInvitations } from '../../src/storage/invitation-repository.js'
import { findMail } from '../../src/storage/mail-outbox-repository.js'
import {
  countOwners,
  insertMembership,
  membersOf,
  organisationsOf,
  roleIn,
} from '../../src/storage/membership-repository.js'
import { createTestStorage } from '../helper.js'

const T0 = Date.parse('2026-03-02T09:00:00.000Z')
const PUBLIC_URL = 'https://curriculum.example.org'
const SRC = path.resolve(import.meta.dirname, '../../src')
/**
 * How many times each race is run: enough for the two transactions to overlap on PostgreSQL (with
 * the lock taken out, every race test failed).
 */
const RACES = 8

/** The refusal `promise` ends in, or a failure of the test if it resolves. */
async function refusal(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => {
      throw new Error(`expected a refusal, got ${JSON.stringify(value)}`)
    },
    (error: unknown) => error,
  )
}

async function refusedAs(promise: Promise<unknown>, reason: MemberRefusal): Promise<void> {
  const error = await refusal(promise)
  expect(error).toBeInstanceOf(MemberRefused)
  expect((error as MemberRefused).reason).toBe(reason)
}

async function invitationRefusedAs(promise: Promise<unknown>, reason: InvitationRefusal): Promise<void> {
  const error = await refusal(promise)
  expect(error).toBeInstanceOf(InvitationRefused)
  expect((error as InvitationRefused).reason).toBe(reason)
}

const ORIGIN = { address: '192.0.2.9', userAgent: null }

describe('members and roles', () => {
  let storage: Storage
  let acme: string
  let dana: MemberActor
  let eve: MemberActor
  let finn: MemberActor
  let ops: MemberActor
  /** A partner account whose address is verified, as applying for live access needs. */
  const partner = async (email: string) => {
    const { id } = await createAccount(storage.db, { email, passwordHash: 'x', role: 'partner' }, T0)
    await markEmailVerified(storage.db, id, email, T0)
    return { id, email }
  }

  beforeEach(async () => {
    storage = await createTestStorage({ catalog: false })
    dana = await partner('dana@acme.example')
    eve = await partner('eve@example.net')
    finn = await partner('finn@example.net')
    const operator = await createAccount(
      storage.db,
      { email: 'ops@example.org', passwordHash: 'x', role: 'operator' },
      T0,
    )
    ops = { id: operator.id, email: operator.email }
    const application = await submitApplication(
      storage.db,
      {
        accountId: dana.id,
        organisationName: 'Acme Learning',
        website: 'https://acme.example',
        contactName: 'Dana',
        contactEmail: dana.email,
        intendedUse: 'Placement',
        requestedScopes: ['students:read'],
      },
      T0,
    )
    const decided = await decideApplication(
      storage.db,
      application.id,
      { event: 'approve', grantedScopes: ['students:read'] },
      'account:ops@example.org',
      T0,
    )
    acme = decided.organisation_id!
  })
  afterEach(() => storage.close())

  const options = { publicUrl: PUBLIC_URL }
  const invite = (email: string, role: MemberRole, by = dana, at = T0) =>
    inviteMember(storage.db, { organisationId: acme, email, role }, by, at, options)
  /** The token in the link the invitation's mail carries: the only place it is given. */
  const tokenOf = async (mailId: number) => {
    const mail = await findMail(storage.db, mailId)
    const token = /\/dashboard\/invitations\/accept\?token=([\w-]+)/.exec(mail!.text_body)?.[1]
    expect(token).toMatch(/^[\w-]{43}$/)
    return token!
  }
  const invited = async (email: string, role: MemberRole, by = dana, at = T0) =>
    tokenOf((await invite(email, role, by, at)).mailId)
  const join = async (member: MemberActor, role: MemberRole) =>
    acceptInvitation(storage.db, await invited(member.email, role), member, T0)
  const actions = async () => (await listAudit(storage.db)).map((row) => row.action).reverse()

  it('makes an approved applicant the owner of the new organisation, in the approval', async () => {
    expect(await membersOf(storage.db, acme)).toEqual([
      { accountId: dana.id, email: dana.email, role: 'owner', since: new Date(T0).toISOString() },
    ])
    expect(await organisationsOf(storage.db, dana.id)).toEqual([
      { organisationId: acme, name: 'Acme Learning', status: 'active', role: 'owner' },
    ])
    expect((await findAccount(storage.db, dana.id))?.organisation_id).toBe(acme)
  })

  it('invites by a mail whose link alone carries the token, stored only as its hash, and audits it', async () => {
    const held: HeldMail[] = []
    const sent = await inviteMember(
      storage.db,
      { organisationId: acme, email: '  Eve@Example.NET ', role: 'developer' },
      dana,
      T0,
      { publicUrl: PUBLIC_URL, held: (mail) => held.push(mail) },
    )
    expect(sent).toEqual({
      id: expect.any(String),
      email: 'eve@example.net',
      role: 'developer',
      expiresAt: '2026-03-09T09:00:00.000Z',
      replaced: [],
      mailId: expect.any(Number),
    })
    const token = await tokenOf(sent.mailId)
    const link = `${PUBLIC_URL}/dashboard/invitations/accept?token=${token}`
    const mail = await findMail(storage.db, sent.mailId)
    expect(mail).toMatchObject({
      kind: 'invitation',
      recipient: 'eve@example.net',
      subject: 'Invitation to join Acme Learning on the Curriculum API',
      state: 'pending',
    })
    expect(mail!.text_body).toBe(
      'dana@acme.example invites you to join Acme Learning on the Curriculum API as developer: API keys, usage, ' +
        'logs, webhooks and test data.\n\n' +
        'To accept, sign in (or sign up) with this address, eve@example.net, and open this link:\n\n' +
        `${link}\n\n` +
        'The link works once, until 2026-03-09 09:00 UTC, and only for the account with the address ' +
        'eve@example.net.\n\n' +
        'If you did not expect this invitation, ignore this message: nothing happens unless the link is opened.\n',
    )
    expect(mail!.html_body).toContain(`<a href="${link}">Accept the invitation to Acme Learning</a>`)
    expect(held).toEqual([
      { id: sent.mailId, kind: 'invitation', subject: 'Invitation to join Acme Learning on the Curriculum API', link },
    ])
    const [stored] = await storage.db.selectFrom('invitations').selectAll().execute()
    expect(stored).toMatchObject({
      id: sent.id,
      token_hash: invitationTokenHash(token),
      organisation_id: acme,
      email: 'eve@example.net',
      role: 'developer',
      invited_by: dana.id,
      created_at: '2026-03-02T09:00:00.000Z',
      expires_at: '2026-03-09T09:00:00.000Z',
      accepted_at: null,
      revoked_at: null,
    })
    expect(JSON.stringify(stored)).not.toContain(token)
    expect(JSON.stringify(sent)).not.toContain(token)
    const [audit] = await listAudit(storage.db)
    expect(audit).toMatchObject({
      actor: 'account:dana@acme.example',
      action: 'invitation.send',
      target: `organisation:${acme}`,
    })
    expect(JSON.parse(audit!.detail)).toEqual({
      invitation: sent.id,
      email: 'eve@example.net',
      role: 'developer',
      replaced: [],
    })
    expect(await pendingInvitations(storage.db, acme, T0)).toEqual([
      {
        id: sent.id,
        email: 'eve@example.net',
        role: 'developer',
        invitedBy: dana.email,
        createdAt: '2026-03-02T09:00:00.000Z',
        expiresAt: '2026-03-09T09:00:00.000Z',
      },
    ])
  })

  it('lets the invited address join once, with the role invited, and audits it', async () => {
    const token = await invited(eve.email, 'viewer')
    expect(await acceptInvitation(storage.db, token, eve, T0 + INVITATION_LIFETIME_MS - 1)).toEqual({
      organisationId: acme,
      organisation: 'Acme Learning',
      role: 'viewer',
    })
    expect(await roleIn(storage.db, acme, eve.id)).toBe('viewer')
    expect(await organisationsOf(storage.db, eve.id)).toEqual([
      { organisationId: acme, name: 'Acme Learning', status: 'active', role: 'viewer' },
    ])
    expect(await pendingInvitations(storage.db, acme, T0)).toEqual([])
    await invitationRefusedAs(acceptInvitation(storage.db, token, eve, T0 + 1), 'used')
    const [audit] = await listAudit(storage.db)
    expect(audit).toMatchObject({ actor: 'account:eve@example.net', action: 'invitation.accept' })
    expect(JSON.parse(audit!.detail)).toMatchObject({ email: eve.email, role: 'viewer' })
    // An account in no organisation yet starts working in the one it joined.
    expect((await findAccount(storage.db, eve.id))?.organisation_id).toBe(acme)
  })

  it('refuses a link unknown, expired, revoked, for another address, or opened by an operator', async () => {
    await invitationRefusedAs(acceptInvitation(storage.db, 'no-such-token', eve, T0), 'unknown')

    const expiring = await invited(eve.email, 'developer')
    await invitationRefusedAs(acceptInvitation(storage.db, expiring, eve, T0 + INVITATION_LIFETIME_MS), 'expired')

    const revoked = await invite(finn.email, 'viewer')
    await revokeInvitation(storage.db, acme, revoked.id, dana, T0 + 1)
    await invitationRefusedAs(acceptInvitation(storage.db, await tokenOf(revoked.mailId), finn, T0 + 2), 'revoked')

    // Another signed-in account holding Finn's link is refused, and the link still works for Finn.
    const forFinn = await invited(finn.email, 'viewer', dana, T0 + 3)
    await invitationRefusedAs(acceptInvitation(storage.db, forFinn, eve, T0 + 4), 'other-address')
    await invitationRefusedAs(
      acceptInvitation(storage.db, forFinn, { ...eve, email: finn.email }, T0 + 4),
      'other-address',
    )
    const forOps = await invited(ops.email, 'owner', dana, T0 + 3)
    await invitationRefusedAs(acceptInvitation(storage.db, forOps, ops, T0 + 4), 'operator')
    expect((await acceptInvitation(storage.db, forFinn, finn, T0 + 5)).role).toBe('viewer')

    expect((await membersOf(storage.db, acme)).map((member) => member.email)).toEqual([dana.email, finn.email])
    expect(await actions()).toEqual([
      'application.approve',
      'invitation.send',
      'invitation.send',
      'invitation.revoke',
      'invitation.send',
      'invitation.send',
      'invitation.accept',
    ])
  })

  it('lets only an owner invite, and refuses a member’s address or one that is not a mailbox', async () => {
    await join(eve, 'developer')
    await join(finn, 'viewer')
    await refusedAs(invite('gus@example.net', 'viewer', eve), 'not-owner')
    await refusedAs(invite('gus@example.net', 'viewer', finn), 'not-owner')
    await refusedAs(invite('gus@example.net', 'viewer', ops), 'not-owner')
    await refusedAs(invite(' EVE@example.net', 'owner'), 'already-member')
    await refusedAs(invite('Gus <gus@example.net>', 'viewer'), 'bad-input')
    await refusedAs(invite('gus@example.net', 'admin' as MemberRole), 'bad-input')
    await expect(
      inviteMember(
        storage.db,
        { organisationId: crypto.randomUUID(), email: 'gus@example.net', role: 'viewer' },
        dana,
        T0,
        options,
      ),
    ).rejects.toBeInstanceOf(NotFoundError)
    expect(await pendingInvitations(storage.db, acme, T0)).toEqual([])
    expect(await storage.db.selectFrom('mail_outbox').select('kind').execute()).toEqual([
      { kind: 'invitation' },
      { kind: 'invitation' },
    ])
  })

  it('replaces an address’s pending invitation with a new one', async () => {
    const first = await invite(eve.email, 'viewer')
    const second = await invite(eve.email, 'developer', dana, T0 + 1000)
    expect(second.replaced).toEqual([first.id])
    await invitationRefusedAs(acceptInvitation(storage.db, await tokenOf(first.mailId), eve, T0 + 2000), 'revoked')
    expect((await pendingInvitations(storage.db, acme, T0 + 2000)).map((i) => [i.id, i.role])).toEqual([
      [second.id, 'developer'],
    ])
    expect((await acceptInvitation(storage.db, await tokenOf(second.mailId), eve, T0 + 2000)).role).toBe('developer')
  })

  it(`keeps at most ${MAX_PENDING_INVITATIONS} invitations pending`, async () => {
    const sent = []
    for (let n = 0; n < MAX_PENDING_INVITATIONS; n++) sent.push(await invite(`person${n}@example.net`, 'viewer'))
    await refusedAs(invite('one-more@example.net', 'viewer'), 'too-many-invitations')
    // Replacing a pending one adds none.
    await invite('person0@example.net', 'developer', dana, T0 + 1)
    await revokeInvitation(storage.db, acme, sent[1]!.id, dana, T0 + 2)
    await invite('one-more@example.net', 'viewer', dana, T0 + 3)
    await refusedAs(invite('two-more@example.net', 'viewer', dana, T0 + 4), 'too-many-invitations')
    // An expired invitation is no longer pending.
    await invite('two-more@example.net', 'viewer', dana, T0 + INVITATION_LIFETIME_MS)
    expect(await pendingInvitations(storage.db, acme, T0 + INVITATION_LIFETIME_MS)).toHaveLength(3)
  })

  it('lets only an owner revoke a pending invitation, once', async () => {
    await join(eve, 'developer')
    const sent = await invite(finn.email, 'viewer')
    await refusedAs(revokeInvitation(storage.db, acme, sent.id, eve, T0), 'not-owner')
    await expect(revokeInvitation(storage.db, acme, crypto.randomUUID(), dana, T0)).rejects.toBeInstanceOf(
      NotFoundError,
    )
    await revokeInvitation(storage.db, acme, sent.id, dana, T0 + 1)
    await refusedAs(revokeInvitation(storage.db, acme, sent.id, dana, T0 + 2), 'not-pending')
    const [audit] = await listAudit(storage.db)
    expect(audit).toMatchObject({ actor: 'account:dana@acme.example', action: 'invitation.revoke' })
    expect(JSON.parse(audit!.detail)).toEqual({ invitation: sent.id, email: finn.email, role: 'viewer' })
  })

  it('lets an owner change roles, never the last owner’s, and audits each change', async () => {
    await join(eve, 'viewer')
    await refusedAs(changeMemberRole(storage.db, acme, dana.id, 'viewer', dana, T0), 'last-owner')
    await refusedAs(changeMemberRole(storage.db, acme, eve.id, 'owner', eve, T0), 'not-owner')
    await expect(changeMemberRole(storage.db, acme, finn.id, 'viewer', dana, T0)).rejects.toBeInstanceOf(NotFoundError)
    expect(await changeMemberRole(storage.db, acme, eve.id, 'owner', dana, T0 + 1)).toBe(true)
    expect(await changeMemberRole(storage.db, acme, eve.id, 'owner', dana, T0 + 1)).toBe(false)
    // With a second owner, the first may step down.
    expect(await changeMemberRole(storage.db, acme, dana.id, 'developer', dana, T0 + 2)).toBe(true)
    await refusedAs(changeMemberRole(storage.db, acme, eve.id, 'developer', dana, T0 + 3), 'not-owner')
    await refusedAs(changeMemberRole(storage.db, acme, eve.id, 'developer', eve, T0 + 3), 'last-owner')
    expect((await membersOf(storage.db, acme)).map((m) => [m.email, m.role])).toEqual([
      [eve.email, 'owner'],
      [dana.email, 'developer'],
    ])
    const rows = (await listAudit(storage.db)).filter((row) => row.action === 'member.role').reverse()
    expect(rows.map((row) => [row.actor, JSON.parse(row.detail)])).toEqual([
      ['account:dana@acme.example', { member: eve.email, from: 'viewer', to: 'owner' }],
      ['account:dana@acme.example', { member: dana.email, from: 'owner', to: 'developer' }],
    ])
  })

  it('ends a removed member’s sessions at once, and clears its organisation if it was this one', async () => {
    const beta = await createOrganisation(storage.db, 'Beta Tutors', T0)
    await join(eve, 'developer')
    await join(finn, 'viewer')
    await setAccountOrganisation(storage.db, eve.id, acme)
    await setAccountOrganisation(storage.db, finn.id, beta.id)
    const eveSessions = [
      (await startSession(storage.db, eve.id, ORIGIN, T0, 3_600_000)).token,
      (await startSession(storage.db, eve.id, ORIGIN, T0, 3_600_000)).token,
    ]
    const finnSession = (await startSession(storage.db, finn.id, ORIGIN, T0, 3_600_000)).token
    const danaSession = (await startSession(storage.db, dana.id, ORIGIN, T0, 3_600_000)).token

    await refusedAs(removeMember(storage.db, acme, dana.id, eve, T0 + 1), 'not-owner')
    expect(await removeMember(storage.db, acme, eve.id, dana, T0 + 1)).toEqual({
      email: eve.email,
      role: 'developer',
      sessionsEnded: 2,
    })
    for (const token of eveSessions) expect(await accountForSession(storage.db, token, T0 + 2)).toBeUndefined()
    expect((await findAccount(storage.db, eve.id))?.organisation_id).toBeNull()
    expect(await organisationsOf(storage.db, eve.id)).toEqual([])

    await removeMember(storage.db, acme, finn.id, dana, T0 + 2)
    expect(await accountForSession(storage.db, finnSession, T0 + 3)).toBeUndefined()
    expect((await findAccount(storage.db, finn.id))?.organisation_id).toBe(beta.id)

    await expect(removeMember(storage.db, acme, finn.id, dana, T0 + 3)).rejects.toBeInstanceOf(NotFoundError)
    await refusedAs(removeMember(storage.db, acme, dana.id, dana, T0 + 3), 'last-owner')
    expect((await accountForSession(storage.db, danaSession, T0 + 3))?.account.id).toBe(dana.id)
    const [audit] = await listAudit(storage.db)
    expect(audit).toMatchObject({ actor: 'account:dana@acme.example', action: 'member.remove' })
    expect(JSON.parse(audit!.detail)).toEqual({ member: finn.email, role: 'viewer', sessionsEnded: 1 })
  })

  it('lets a member leave, but never the last owner', async () => {
    await join(eve, 'developer')
    const session = (await startSession(storage.db, eve.id, ORIGIN, T0, 3_600_000)).token
    await refusedAs(leaveOrganisation(storage.db, acme, dana, T0), 'last-owner')
    await leaveOrganisation(storage.db, acme, eve, T0 + 1)
    expect(await roleIn(storage.db, acme, eve.id)).toBeUndefined()
    // Leaving is the member's own choice: its sessions, for its other organisations, stay.
    expect((await accountForSession(storage.db, session, T0 + 2))?.account.id).toBe(eve.id)
    await expect(leaveOrganisation(storage.db, acme, eve, T0 + 2)).rejects.toBeInstanceOf(NotFoundError)

    await join(finn, 'owner')
    await setAccountOrganisation(storage.db, dana.id, acme)
    await leaveOrganisation(storage.db, acme, dana, T0 + 3)
    expect((await findAccount(storage.db, dana.id))?.organisation_id).toBeNull()
    expect(await membersOf(storage.db, acme)).toMatchObject([{ email: finn.email, role: 'owner' }])
    const [audit] = await listAudit(storage.db)
    expect(audit).toMatchObject({ actor: 'account:dana@acme.example', action: 'member.leave' })
    expect(JSON.parse(audit!.detail)).toEqual({ member: dana.email, role: 'owner' })
  })

  it('lets an account belong to several organisations, listed by name for switching', async () => {
    const beta = await createOrganisation(storage.db, 'Beta Tutors', T0)
    await insertMembership(storage.db, { organisationId: beta.id, accountId: finn.id, role: 'owner' }, T0)
    await join(eve, 'developer')
    const token = await tokenOf(
      (await inviteMember(storage.db, { organisationId: beta.id, email: eve.email, role: 'viewer' }, finn, T0, options))
        .mailId,
    )
    await acceptInvitation(storage.db, token, eve, T0)
    expect(await organisationsOf(storage.db, eve.id)).toEqual([
      { organisationId: acme, name: 'Acme Learning', status: 'active', role: 'developer' },
      { organisationId: beta.id, name: 'Beta Tutors', status: 'active', role: 'viewer' },
    ])
    // An owner of one organisation is nothing in another.
    await refusedAs(
      inviteMember(
        storage.db,
        { organisationId: beta.id, email: 'gus@example.net', role: 'viewer' },
        dana,
        T0,
        options,
      ),
      'not-owner',
    )
  })

  it('mails nothing about students: the members case and its mail import no module of student data', () => {
    for (const module of ['cases/members.ts', 'cases/invitation-mail.ts']) {
      const imports = [...fs.readFileSync(path.join(SRC, module), 'utf8').matchAll(/from '(\.[^']+)'/g)].map(
        (m) => m[1]!,
      )
      expect(
        imports.filter((name) => /student|progress|roster|disclosure|share|school/.test(name)),
        module,
      ).toEqual([])
    }
  })

  describe('at the same moment', () => {
    /** A new organisation whose owners are `owners`, and whose other members are developers. */
    const organisation = async (n: number, owners: MemberActor[], developers: MemberActor[] = []) => {
      const { id } = await createOrganisation(storage.db, `Race ${n}`, T0)
      for (const [members, role] of [
        [owners, 'owner'],
        [developers, 'developer'],
      ] as const)
        for (const member of members)
          await insertMembership(storage.db, { organisationId: id, accountId: member.id, role }, T0)
      return id
    }
    const outcomes = async (changes: Promise<unknown>[]) => {
      const settled = await Promise.allSettled(changes)
      return {
        done: settled.filter((s) => s.status === 'fulfilled').length,
        refused: settled.flatMap((s) =>
          s.status === 'rejected' ? [(s.reason as MemberRefused).reason ?? (s.reason as Error).name] : [],
        ),
      }
    }

    it('leaves one owner when two owners demote each other', async () => {
      for (let n = 0; n < RACES; n++) {
        const id = await organisation(n, [dana, eve])
        const result = await outcomes([
          changeMemberRole(storage.db, id, eve.id, 'developer', dana, T0),
          changeMemberRole(storage.db, id, dana.id, 'developer', eve, T0),
        ])
        expect(result).toEqual({ done: 1, refused: ['not-owner'] })
        expect(await countOwners(storage.db, id)).toBe(1)
      }
    })

    it('leaves one owner when two owners step down or leave at once', async () => {
      for (let n = 0; n < RACES; n++) {
        const id = await organisation(n, [dana, eve])
        const stepDown = await outcomes([
          changeMemberRole(storage.db, id, dana.id, 'viewer', dana, T0),
          changeMemberRole(storage.db, id, eve.id, 'viewer', eve, T0),
        ])
        expect(stepDown).toEqual({ done: 1, refused: ['last-owner'] })
        expect(await countOwners(storage.db, id)).toBe(1)

        const other = await organisation(RACES + n, [dana, eve])
        const leave = await outcomes([
          leaveOrganisation(storage.db, other, dana, T0),
          leaveOrganisation(storage.db, other, eve, T0),
        ])
        expect(leave).toEqual({ done: 1, refused: ['last-owner'] })
        expect(await countOwners(storage.db, other)).toBe(1)
      }
    })

    it('refuses the last owner removed twice at once', async () => {
      for (let n = 0; n < RACES; n++) {
        // Each of two owners removes the other: the second removal would take the last owner.
        const id = await organisation(n, [dana, eve])
        const crossed = await outcomes([
          removeMember(storage.db, id, eve.id, dana, T0),
          removeMember(storage.db, id, dana.id, eve, T0),
        ])
        expect(crossed).toEqual({ done: 1, refused: ['not-owner'] })
        expect(await countOwners(storage.db, id)).toBe(1)

        // An owner removed twice (a form sent twice) while leaving: one of the three lands.
        const again = await organisation(RACES + n, [dana, eve], [finn])
        const thrice = await outcomes([
          removeMember(storage.db, again, eve.id, dana, T0),
          removeMember(storage.db, again, eve.id, dana, T0),
          leaveOrganisation(storage.db, again, eve, T0),
        ])
        expect(thrice).toEqual({ done: 1, refused: ['NotFoundError', 'NotFoundError'] })
        expect((await membersOf(storage.db, again)).map((m) => m.email)).toEqual([dana.email, finn.email])

        // The one owner left, removed twice at once, is refused twice.
        const single = await organisation(2 * RACES + n, [dana], [finn])
        const twice = await outcomes([
          removeMember(storage.db, single, dana.id, dana, T0),
          removeMember(storage.db, single, dana.id, dana, T0),
        ])
        expect(twice).toEqual({ done: 0, refused: ['last-owner', 'last-owner'] })
        expect(await countOwners(storage.db, single)).toBe(1)
      }
    })

    it('lets one of two acceptances of a link in, and keeps the cap when two owners invite at once', async () => {
      for (let n = 0; n < RACES; n++) {
        const id = await organisation(n, [dana, finn])
        const token = await tokenOf(
          (await inviteMember(storage.db, { organisationId: id, email: eve.email, role: 'viewer' }, dana, T0, options))
            .mailId,
        )
        const accepted = await outcomes([
          acceptInvitation(storage.db, token, eve, T0),
          acceptInvitation(storage.db, token, eve, T0),
        ])
        expect(accepted).toEqual({ done: 1, refused: ['used'] })
        expect(await roleIn(storage.db, id, eve.id)).toBe('viewer')
      }
      const id = await organisation(RACES, [dana, finn])
      for (let n = 1; n < MAX_PENDING_INVITATIONS; n++)
        await inviteMember(
          storage.db,
          { organisationId: id, email: `p${n}@example.net`, role: 'viewer' },
          dana,
          T0,
          options,
        )
      const last = await outcomes([
        inviteMember(storage.db, { organisationId: id, email: 'a@example.net', role: 'viewer' }, dana, T0, options),
        inviteMember(storage.db, { organisationId: id, email: 'b@example.net', role: 'viewer' }, finn, T0, options),
      ])
      expect(last).toEqual({ done: 1, refused: ['too-many-invitations'] })
      expect(await pendingInvitations(storage.db, id, T0)).toHaveLength(MAX_PENDING_INVITATIONS)
    })
  })
})
