/**
 * The organisation's members (docs/accounts.md): everyone sees them; owners invite, change roles,
 * remove and revoke, each through cases/members.ts, which keeps an owner under any race.
 */
import {
  changeMemberRole,
  inviteMember,
  leaveOrganisation,
  MemberRefused,
  removeMember,
  requireSecondFactor,
  revokeInvitation,
} from '../../../../cases/members.js'
import { memberRole } from '../../../../domain/member-roles.js'
import { pendingInvitations } from '../../../../storage/invitation-repository.js'
import { membersOf, withSecondFactor } from '../../../../storage/membership-repository.js'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { PagePlugin } from '../../../dashboard-context.js'
import { DashboardError } from '../../../dashboard-error.js'
import { type FormBody, text } from '../../../forms.js'
import { partner, partnerMay } from '../../../page-roles.js'
import { sendPage } from '../../../send-page.js'
import { partnerView } from '../partner-view.js'
import { MEMBERS_PATH, type MembersView, membersBody } from './views.js'

const owners = partnerMay('members.manage')

export const memberPages: PagePlugin = async (app, { context }) => {
  const { storage, clock, mail } = context
  const db = storage.db

  /** The current organisation and the account's role in it; 404 for a partner who has none. */
  async function current(request: FastifyRequest) {
    const v = await partnerView(context, request)
    if (v.organisation === undefined || v.role === undefined)
      throw new DashboardError(
        404,
        'No organisation yet',
        'You are not a member of an organisation: apply for live access, or accept an invitation from one.',
      )
    return { organisation: v.organisation, role: v.role, by: { id: v.account.id, email: v.account.email } }
  }

  async function show(request: FastifyRequest, reply: FastifyReply, form?: MembersView['form']) {
    const { organisation, role, by } = await current(request)
    const members = await membersOf(db, organisation.id)
    const view: MembersView = {
      organisation: organisation.name,
      role,
      accountId: by.id,
      members,
      twoStepRequired: organisation.require_second_factor === 1,
      withFactor: await withSecondFactor(
        db,
        members.map((m) => m.accountId),
      ),
      invitations: await pendingInvitations(db, organisation.id, clock.now()),
      ...(form === undefined ? {} : { form }),
    }
    return sendPage(request, reply, 'Members', membersBody(request, view), form ? 400 : 200, MEMBERS_PATH)
  }

  app.get('/members', partner, (request, reply) => show(request, reply))

  app.post('/members/invite', owners, async (request, reply) => {
    const { organisation, by } = await current(request)
    const body = request.body as FormBody
    const email = text(body, 'email')
    const role = text(body, 'role')
    try {
      await inviteMember(
        db,
        { organisationId: organisation.id, email, role: memberRole(role) ?? 'viewer' },
        by,
        clock.now(),
        {
          publicUrl: mail.publicUrl,
          ...(mail.held ? { held: mail.held } : {}),
        },
      )
    } catch (error) {
      if (error instanceof MemberRefused && (error.reason === 'bad-input' || error.reason === 'already-member'))
        return show(request, reply, { email, role, errors: { email: error.message } })
      throw error
    }
    return reply.redirect(`${MEMBERS_PATH}?notice=invited`, 303)
  })

  app.post('/members/:accountId/role', owners, async (request, reply) => {
    const { organisation, by } = await current(request)
    const { accountId } = request.params as { accountId: string }
    const role = memberRole(text(request.body as FormBody, 'role'))
    if (role === undefined) throw new DashboardError(400, 'No such role', 'Choose owner, developer or viewer.')
    await changeMemberRole(db, organisation.id, accountId, role, by, clock.now())
    return reply.redirect(`${MEMBERS_PATH}?notice=role-changed`, 303)
  })

  app.post('/members/:accountId/remove', owners, async (request, reply) => {
    const { organisation, by } = await current(request)
    const { accountId } = request.params as { accountId: string }
    await removeMember(db, organisation.id, accountId, by, clock.now())
    // Removing oneself ends one's own sessions too: the sign-in page says so.
    if (accountId === by.id) return reply.redirect('/dashboard/login?notice=signed-out', 303)
    return reply.redirect(`${MEMBERS_PATH}?notice=member-removed`, 303)
  })

  app.post('/members/invitations/:id/revoke', owners, async (request, reply) => {
    const { organisation, by } = await current(request)
    const { id } = request.params as { id: string }
    await revokeInvitation(db, organisation.id, id, by, clock.now())
    return reply.redirect(`${MEMBERS_PATH}?notice=invitation-revoked`, 303)
  })

  app.post('/members/two-step', partnerMay('organisation.settings'), async (request, reply) => {
    const { organisation, by } = await current(request)
    const required = text(request.body as FormBody, 'required') === 'yes'
    await requireSecondFactor(db, organisation.id, required, by, clock.now())
    return reply.redirect(`${MEMBERS_PATH}?notice=${required ? 'two-step-org-on' : 'two-step-org-off'}`, 303)
  })

  app.post('/members/leave', partner, async (request, reply) => {
    const { organisation, by } = await current(request)
    await leaveOrganisation(db, organisation.id, by, clock.now())
    return reply.redirect('/dashboard/partner?notice=left', 303)
  })
}
