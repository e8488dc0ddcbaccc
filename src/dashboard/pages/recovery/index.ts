/**
 * Recovery without a session: "Forgot your password?" and the pages the mailed links open
 * (choose a new password, confirm an address). A link's page only shows a form; the link is used
 * by the form's POST, so a mail scanner that opens links uses none.
 *
 * Asking for a reset link answers the same, at once, for every well-formed address: the lookup
 * and the mail happen after the answer (after-answer.ts). Requests are limited per client address
 * (PASSWORD_RESET_LIMIT an hour), and each account is sent at most 3 links an hour.
 */
import { checkAccountLink } from '../../../cases/account-links.js'
import { verifyEmail } from '../../../cases/email-verification.js'
import { requestPasswordReset, resetPassword } from '../../../cases/password-reset.js'
import { addressKey } from '../../../domain/client-address.js'
import { hashPassword, passwordProblem } from '../../../domain/passwords.js'
import { normaliseEmail } from '../../../storage/account-repository.js'
import type { PagePlugin } from '../../dashboard-context.js'
import { type FormBody, isEmail, linkToken, text } from '../../forms.js'
import { sendPage } from '../../send-page.js'
import { tooManyAttempts } from '../../sign-in-guard.js'
import { forgotForm, linkProblem, resetForm, verifyForm } from './views.js'

const visitor = { config: { dashboard: 'public' as const } }

const ASK_RESET = 'Ask for a new one under “Forgot your password?” on the sign-in page.'
const ASK_VERIFY = 'Sign in and send a new one from your Account page.'

export const recoveryPages: PagePlugin = async (app, { context }) => {
  const { storage, clock, limiters, guard, mail, afterAnswer } = context
  const db = storage.db

  app.get('/forgot-password', visitor, (request, reply) =>
    sendPage(request, reply, 'Forgot your password?', forgotForm(request, '')),
  )

  app.post('/forgot-password', visitor, async (request, reply) => {
    const email = normaliseEmail(text(request.body as FormBody, 'email'))
    if (!isEmail(email)) {
      const errors = { email: 'Enter an e-mail address like name@example.org.' }
      return sendPage(request, reply, 'Forgot your password?', forgotForm(request, email, errors), 400)
    }
    const attempt = await limiters.passwordResetsByAddress.hit(addressKey(request.ip))
    if (!attempt.allowed) tooManyAttempts(attempt.resetMs)
    const now = clock.now()
    afterAnswer.run('a password reset request', () => requestPasswordReset(db, email, mail.publicUrl, now, mail.held))
    return reply.redirect('/dashboard/login?notice=reset-requested', 303)
  })

  app.get('/reset-password', visitor, async (request, reply) => {
    const token = linkToken(request)
    const check = await checkAccountLink(db, token, 'password-reset', clock.now())
    if (!check.ok) linkProblem(check.problem, ASK_RESET)
    return sendPage(request, reply, 'Choose a new password', resetForm(request, { token, email: check.link.email }))
  })

  app.post('/reset-password', visitor, async (request, reply) => {
    const body = request.body as FormBody
    const token = text(body, 'token')
    const password = text(body, 'password')
    const check = await checkAccountLink(db, token, 'password-reset', clock.now())
    if (!check.ok) linkProblem(check.problem, ASK_RESET)
    const weak = passwordProblem(password, check.link.email)
    if (weak !== null) {
      const form = resetForm(request, { token, email: check.link.email }, { password: weak })
      return sendPage(request, reply, 'Choose a new password', form, 400)
    }
    const passwordHash = await guard.hash(request.ip, () => hashPassword(password))
    const done = await resetPassword(db, { token, passwordHash, publicUrl: mail.publicUrl }, clock.now(), mail.held)
    if (!done.ok) linkProblem(done.problem, ASK_RESET)
    // The session this browser had, if any, ended with the others.
    await context.sessions.signOut(request, reply)
    return reply.redirect('/dashboard/login?notice=password-reset', 303)
  })

  app.get('/verify-email', visitor, async (request, reply) => {
    const token = linkToken(request)
    const check = await checkAccountLink(db, token, 'verify-email', clock.now())
    if (!check.ok) linkProblem(check.problem, ASK_VERIFY)
    return sendPage(
      request,
      reply,
      'Verify your e-mail address',
      verifyForm(request, { token, email: check.link.email }),
    )
  })

  app.post('/verify-email', visitor, async (request, reply) => {
    const done = await verifyEmail(db, text(request.body as FormBody, 'token'), clock.now())
    if (!done.ok) linkProblem(done.problem, ASK_VERIFY)
    return reply.redirect(
      request.account ? '/dashboard/account?notice=email-verified' : '/dashboard/login?notice=email-verified',
      303,
    )
  })
}
