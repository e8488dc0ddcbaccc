/**
 * The Account page of every signed-in account, partner or operator, and the page a
 * change-of-address link opens. Password and address changes ask for the current password,
 * checked through the sign-in guard (its throttles and hash gate), so a session left open is not
 * enough to take the account.
 */
import {
  confirmEmailChange,
  changePassword,
  endEverySession,
  endSessionById,
  requestEmailChange,
} from '../../../cases/account-settings.js'
import { checkAccountLink } from '../../../cases/account-links.js'
import { sendVerificationLink } from '../../../cases/email-verification.js'
import { switchOrganisation } from '../../../cases/members.js'
import { organisationsOf } from '../../../storage/membership-repository.js'
import { passkeysOf } from '../../../storage/passkey-repository.js'
import { DashboardError } from '../../dashboard-error.js'
import { bearerTokenHash } from '../../../domain/bearer-token.js'
import { hashPassword, passwordProblem, verifyPassword } from '../../../domain/passwords.js'
import { normaliseEmail, sessionsOf } from '../../../storage/account-repository.js'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { PagePlugin } from '../../dashboard-context.js'
import { type FieldErrors, type FormBody, isEmail, linkToken, text } from '../../forms.js'
import { sendPage } from '../../send-page.js'
import { linkProblem } from '../recovery/views.js'
import { ACCOUNT_PATH, type AccountView, accountBody } from './views.js'
import { confirmEmailForm } from './confirm-email.js'
import { twoStepPages } from './two-step.js'
import { secondFactorStatus } from '../../../cases/second-factor.js'
import { noticePreferences } from '../../../cases/notices.js'
import { noticePages } from './notices.js'

// An operator without a second factor still reaches this page and its forms (two-step-gate.ts).
const signedIn = { config: { dashboard: 'signed-in' as const, twoStep: 'setup' as const } }
const visitor = { config: { dashboard: 'public' as const } }
const ASK_CHANGE = 'Sign in and ask for the change again on your Account page.'

export const accountPages: PagePlugin = async (app, { context }) => {
  const { storage, clock, guard, sessions, mail } = context
  const db = storage.db

  async function show(request: FastifyRequest, reply: FastifyReply, refused?: AccountView['refused']) {
    const account = request.account!
    const view: AccountView = {
      account,
      sessions: await sessionsOf(db, account.id, clock.now()),
      currentSessionId: request.sessionId,
      organisations: account.role === 'partner' ? await organisationsOf(db, account.id) : [],
      secondFactor: await secondFactorStatus(db, account.id, clock.now()),
      ...(account.role === 'partner' ? { notices: await noticePreferences(db, account.id) } : {}),
      passkeys: await passkeysOf(db, account.id),
      ...(refused === undefined ? {} : { refused }),
    }
    return sendPage(request, reply, 'Your account', accountBody(request, view), refused ? 400 : 200, ACCOUNT_PATH)
  }
  await app.register(noticePages, { context })
  await app.register(twoStepPages, {
    context,
    showAccount: (request, reply, errors) => show(request, reply, { form: 'two-step', errors }),
  })

  /** Checks the current password as a sign-in would be checked: throttled per account and address. */
  async function currentPasswordMatches(request: FastifyRequest, password: string): Promise<boolean> {
    const account = request.account!
    const attempt = guard.reserve(account.email, request.ip)
    try {
      await attempt.checkShared()
      const matches = await guard.hash(request.ip, () => verifyPassword(password, account.password_hash))
      if (matches) attempt.succeed()
      else await attempt.fail()
      return matches
    } finally {
      attempt.cancel()
    }
  }

  app.get('/account', signedIn, (request, reply) => show(request, reply))

  app.post('/account/verify', signedIn, async (request, reply) => {
    const sent = await sendVerificationLink(db, request.account!.id, mail.publicUrl, clock.now(), mail.held)
    const notice = {
      queued: 'verification-sent',
      limited: 'verification-limited',
      'verified-already': 'email-verified',
    }
    return reply.redirect(`${ACCOUNT_PATH}?notice=${notice[sent]}`, 303)
  })

  app.post('/account/password', signedIn, async (request, reply) => {
    const body = request.body as FormBody
    const account = request.account!
    const current = text(body, 'currentPassword')
    const password = text(body, 'newPassword')
    const errors: FieldErrors = {}
    const weak = passwordProblem(password, account.email)
    if (weak !== null) errors.newPassword = weak
    if (current === '') errors.currentPassword = 'Enter your current password.'
    if (Object.keys(errors).length > 0) return show(request, reply, { form: 'password', errors })
    if (!(await currentPasswordMatches(request, current)))
      return show(request, reply, {
        form: 'password',
        errors: { currentPassword: 'The current password is not right.' },
      })
    const passwordHash = await guard.hash(request.ip, () => hashPassword(password))
    const keepTokenHash = bearerTokenHash(sessions.tokenOf(request)!)
    await changePassword(
      db,
      account,
      { passwordHash, keepTokenHash, publicUrl: mail.publicUrl },
      clock.now(),
      mail.held,
    )
    return reply.redirect(`${ACCOUNT_PATH}?notice=password-changed`, 303)
  })

  app.post('/account/email', signedIn, async (request, reply) => {
    const body = request.body as FormBody
    const account = request.account!
    const email = normaliseEmail(text(body, 'newEmail'))
    const password = text(body, 'emailPassword')
    const errors: FieldErrors = {}
    if (!isEmail(email)) errors.newEmail = 'Enter an e-mail address like name@example.org.'
    else if (email === account.email) errors.newEmail = 'This is your address already: enter the new one.'
    if (password === '') errors.emailPassword = 'Enter your current password.'
    if (Object.keys(errors).length > 0) return show(request, reply, { form: 'email', errors, email })
    if (!(await currentPasswordMatches(request, password))) {
      const wrong = { emailPassword: 'The current password is not right.' }
      return show(request, reply, { form: 'email', errors: wrong, email })
    }
    const sent = await requestEmailChange(db, account, email, mail.publicUrl, clock.now(), mail.held)
    return reply.redirect(`${ACCOUNT_PATH}?notice=${sent ? 'email-change-sent' : 'email-change-limited'}`, 303)
  })

  app.post('/account/organisation', signedIn, async (request, reply) => {
    const organisationId = text(request.body as FormBody, 'organisationId')
    const switched = await switchOrganisation(db, request.account!.id, organisationId)
    if (!switched) throw new DashboardError(404, 'Not found', 'You are not a member of that organisation.')
    return reply.redirect('/dashboard/partner?notice=switched', 303)
  })

  app.post('/account/sessions/:id/end', signedIn, async (request, reply) => {
    const { id } = request.params as { id: string }
    const ended = await endSessionById(db, request.account!, id, clock.now())
    if (ended && id === request.sessionId) {
      await sessions.signOut(request, reply)
      return reply.redirect('/dashboard/login?notice=signed-out', 303)
    }
    return reply.redirect(`${ACCOUNT_PATH}?notice=${ended ? 'session-ended' : 'session-gone'}`, 303)
  })

  app.post('/account/sign-out-everywhere', signedIn, async (request, reply) => {
    await endEverySession(db, request.account!, clock.now())
    await sessions.signOut(request, reply)
    return reply.redirect('/dashboard/login?notice=signed-out-everywhere', 303)
  })

  app.get('/account/confirm-email', visitor, async (request, reply) => {
    const token = linkToken(request)
    const check = await checkAccountLink(db, token, 'email-change', clock.now())
    if (!check.ok) linkProblem(check.problem, ASK_CHANGE)
    return sendPage(
      request,
      reply,
      'Confirm your new address',
      confirmEmailForm(request, { token, email: check.link.email }),
    )
  })

  app.post('/account/confirm-email', visitor, async (request, reply) => {
    const done = await confirmEmailChange(db, text(request.body as FormBody, 'token'), clock.now())
    if (!done.ok) linkProblem(done.problem, ASK_CHANGE)
    const next = request.account ? `${ACCOUNT_PATH}?notice=email-changed` : '/dashboard/login?notice=email-changed'
    return reply.redirect(next, 303)
  })
}
