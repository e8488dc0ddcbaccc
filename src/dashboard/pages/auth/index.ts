/**
 * Sign-up (partners only; operators are created with the CLI), sign-in and sign-out.
 *
 * Sign-up answers the same for every valid form: a redirect to the sign-in page, whose notice
 * covers both cases. It creates the account only if the address has none, and it never says
 * which: "an account exists already" told anybody which addresses have accounts, the
 * operator's included. The sandbox comes at the first sign-in: its organisation of synthetic
 * students and a first test key, shown on the welcome page, so integration still starts
 * before any review.
 *
 * Password forms go through the sign-in guard (sign-in-guard.ts): attempts are throttled per
 * (account, address) pair and per address, reserved before any hash, and hashes are capped.
 * Sign-ups are limited per address (SIGN_UP_LIMIT an hour), counted the same either way. A
 * sign-in or a sign-up takes as long whether or not the account exists.
 */
import { mailAfterSignUp, signUp } from '../../../cases/accounts.js'
import { addressKey } from '../../../domain/client-address.js'
import { DUMMY_HASH, hashPassword, passwordProblem, verifyPassword } from '../../../domain/passwords.js'
import { provideSandbox } from '../../../cases/sandbox.js'
import { findAccountByEmail, normaliseEmail } from '../../../storage/account-repository.js'
import type { PagePlugin } from '../../dashboard-context.js'
import { type FieldErrors, type FormBody, isEmail, text } from '../../forms.js'
import { sendPage } from '../../send-page.js'
import { tooManyAttempts } from '../../sign-in-guard.js'
import { showNewKey } from '../../views/new-key.js'
import { hasSecondFactor } from '../../../cases/second-factor.js'
import { CODE_PATH } from '../../two-step-gate.js'
import { home, safeNext } from './next.js'
import { secondStepPages } from './second-step.js'
import { signInForm, signUpForm } from './views.js'

const visitor = { config: { dashboard: 'public' as const } }

export const authPages: PagePlugin = async (app, { context }) => {
  const { storage, clock, limiters, sessions, guard } = context

  app.get('/', visitor, (request, reply) =>
    reply.redirect(request.account ? home(request.account.role) : '/dashboard/login', 303),
  )

  app.get('/signup', visitor, (request, reply) =>
    sendPage(request, reply, 'Create a partner account', signUpForm(request, {})),
  )

  app.post('/signup', visitor, async (request, reply) => {
    const body = request.body as FormBody
    const email = normaliseEmail(text(body, 'email'))
    const password = text(body, 'password')
    const errors: FieldErrors = {}
    if (!isEmail(email)) errors.email = 'Enter an e-mail address like name@example.org.'
    const weak = passwordProblem(password, email)
    if (weak !== null) errors.password = weak
    if (Object.keys(errors).length > 0)
      return sendPage(request, reply, 'Create a partner account', signUpForm(request, { email }, errors), 400)
    // Counted before any work, for new and existing addresses alike (else the limit would tell).
    const attempt = await limiters.signUpsByAddress.hit(addressKey(request.ip))
    if (!attempt.allowed) tooManyAttempts(attempt.resetMs)
    // Hashed either way, so an existing address answers no faster than a new one.
    const passwordHash = await guard.hash(request.ip, () => hashPassword(password))
    const now = clock.now()
    const created = await signUp(storage.db, { email, passwordHash }, now)
    // After the answer, so that its time says nothing: a new account's verification link, or word to the address.
    context.afterAnswer.run('the sign-up mail', () =>
      mailAfterSignUp(storage.db, { email, created, publicUrl: context.mail.publicUrl }, now, context.mail.held),
    )
    return reply.redirect('/dashboard/login?notice=signed-up', 303)
  })

  app.get('/login', visitor, (request, reply) => {
    if (request.account) return reply.redirect(home(request.account.role), 303)
    const next = safeNext(String((request.query as Record<string, unknown>).next ?? ''))
    return sendPage(request, reply, 'Sign in', signInForm(request, { ...(next ? { next } : {}) }))
  })

  app.post('/login', visitor, async (request, reply) => {
    const body = request.body as FormBody
    const email = normaliseEmail(text(body, 'email'))
    const password = text(body, 'password')
    const next = safeNext(text(body, 'next'))
    // Reserved before the first await: concurrent attempts count against each other.
    const attempt = guard.reserve(email, request.ip)
    try {
      await attempt.checkShared()
      const account = email === '' ? undefined : await findAccountByEmail(storage.db, email)
      // Hash even when there is no account, so timing does not tell which e-mails exist.
      const matches = await guard.hash(request.ip, () => verifyPassword(password, account?.password_hash ?? DUMMY_HASH))
      if (account === undefined || !matches) {
        await attempt.fail()
        const errors = { email: 'The e-mail address or the password is not right.' }
        return sendPage(
          request,
          reply,
          'Sign in',
          signInForm(request, { email, ...(next ? { next } : {}) }, errors),
          401,
        )
      }
      attempt.succeed()
      // Looked up only after the right password, so a wrong one answers alike for every account.
      if (await hasSecondFactor(storage.db, account.id)) {
        await sessions.signIn(request, reply, account, true)
        return reply.redirect(next ? `${CODE_PATH}?next=${encodeURIComponent(next)}` : CODE_PATH, 303)
      }
      // A partner's first sign-in: the sandbox and its first test key, shown once.
      const first = account.role === 'partner' ? await provideSandbox(storage.db, account, clock.now()) : undefined
      await sessions.signIn(request, reply, account)
      if (first !== undefined) return showNewKey(request, reply, context, first, { welcome: true })
      return reply.redirect(next ?? home(account.role), 303)
    } finally {
      // Refused by the hash gate or the shared windows, or a storage error: not a failure.
      attempt.cancel()
    }
  })

  app.post('/logout', { config: { dashboard: 'public', twoStep: 'always' } }, async (request, reply) => {
    await sessions.signOut(request, reply)
    return reply.redirect('/dashboard/login?notice=signed-out', 303)
  })

  await app.register(secondStepPages, { context })
}
