/**
 * The page an invitation's link opens: signed in with the invited address, a button joins the
 * organisation (cases/members.ts says why not otherwise, and leaves the link valid for the right
 * account). Anyone not signed in is sent to sign in (or sign up) and comes back here.
 */
import { acceptInvitation } from '../../../cases/members.js'
import { organisationById } from '../../../storage/access-repository.js'
import { findInvitationByToken } from '../../../storage/invitation-repository.js'
import type { PagePlugin } from '../../dashboard-context.js'
import { DashboardError } from '../../dashboard-error.js'
import { isBearerToken } from '../../../domain/bearer-token.js'
import { type FormBody, linkToken, text } from '../../forms.js'
import { html } from '../../html.js'
import { csrfField } from '../../layout.js'
import { sendPage } from '../../send-page.js'
import { operatorInvitationPages } from './operator.js'

const signedIn = { config: { dashboard: 'signed-in' as const } }

export const invitationPages: PagePlugin = async (app, { context }) => {
  const { storage, clock } = context
  const db = storage.db

  app.get('/invitations/accept', signedIn, async (request, reply) => {
    const token = linkToken(request)
    const invitation = isBearerToken(token) ? await findInvitationByToken(db, token) : undefined
    const organisation = invitation === undefined ? undefined : await organisationById(db, invitation.organisation_id)
    if (invitation === undefined || organisation === undefined)
      throw new DashboardError(
        404,
        'This invitation link does not work',
        'It is not a link we sent, or it was cut short: copy the whole address from the message, or ask an owner ' +
          'for a new invitation.',
      )
    const body = html`<p>You are invited to join <strong>${organisation.name}</strong> as a
<strong>${invitation.role}</strong>, as ${invitation.email}.</p>
<form method="post" action="/dashboard/invitations/accept" class="stack">${csrfField(request)}
  <input type="hidden" name="token" value="${token}">
  <div><button type="submit">Join ${organisation.name}</button></div>
</form>`
    return sendPage(request, reply, 'Join an organisation', body)
  })

  app.post('/invitations/accept', signedIn, async (request, reply) => {
    const account = request.account!
    const token = text(request.body as FormBody, 'token')
    await acceptInvitation(db, token, { id: account.id, email: account.email }, clock.now())
    return reply.redirect('/dashboard/partner/members?notice=joined', 303)
  })

  await app.register(operatorInvitationPages, { context })
}
