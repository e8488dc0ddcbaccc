/**
 * Sign-up (partners only; operators are created with the CLI), sign-in and sign-out.
 *
 * Sign-up gives the partner a sandbox at once: an organisation of synthetic students and a
 * first test key, shown on the welcome page, so integration starts before any review.
 * Sign-in failures are limited per account and per address; a login takes as long whether or
 * not the account exists.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { DUMMY_HASH, hashPassword, passwordProblem, verifyPassword } from '../../domain/passwords.js'
import { createAccount, findAccountByEmail, normaliseEmail } from '../../storage/account-repository.js'
import { createApiKey } from '../../storage/access-repository.js'
import { createSandbox } from '../../storage/sandbox-repository.js'
import { inTransaction } from '../../storage/transaction.js'
import type { DashboardContext } from '../dashboard-plugin.js'
import { sendPage } from '../dashboard-plugin.js'
import { DashboardError } from '../dashboard-error.js'
import { errorSummary, field, type FieldErrors, type FormBody, isEmail, text } from '../forms.js'
import { html } from '../html.js'
import { csrfField } from '../layout.js'
import { newKeyPage } from '../views/new-key.js'

/** Where to go after signing in: only a dashboard path of ours, never another site. */
function safeNext(value: string): string | undefined {
  return /^\/dashboard(\/[A-Za-z0-9/_?=&%.-]*)?$/.test(value) && !value.startsWith('//') ? value : undefined
}

function home(role: string): string {
  return role === 'operator' ? '/dashboard/operator/applications' : '/dashboard/partner'
}

function signUpForm(request: FastifyRequest, values: { email?: string }, errors: FieldErrors = {}) {
  return html`${errorSummary(errors)}
<p>Create a partner account. You get a sandbox at once: test keys that work on the real catalog and on made-up students, before any review.</p>
<form method="post" action="/dashboard/signup" class="stack" novalidate>
  ${csrfField(request)}
  ${field('email', 'Work e-mail address', { type: 'email', value: values.email ?? '', autocomplete: 'email', required: true, errors })}
  ${field('password', 'Password', { type: 'password', autocomplete: 'new-password', required: true, errors, hint: 'At least 12 characters. A few words together are easy to remember and hard to guess.' })}
  <div><button type="submit">Create account</button></div>
</form>
<p>Already have an account? <a href="/dashboard/login">Sign in</a>.</p>`
}

function signInForm(request: FastifyRequest, values: { email?: string; next?: string }, errors: FieldErrors = {}) {
  return html`${errorSummary(errors)}
<form method="post" action="/dashboard/login" class="stack" novalidate>
  ${csrfField(request)}
  ${values.next ? html`<input type="hidden" name="next" value="${values.next}">` : ''}
  ${field('email', 'E-mail address', { type: 'email', value: values.email ?? '', autocomplete: 'username', required: true, errors })}
  ${field('password', 'Password', { type: 'password', autocomplete: 'current-password', required: true, errors })}
  <div><button type="submit">Sign in</button></div>
</form>
<p>New partner? <a href="/dashboard/signup">Create an account</a>.</p>`
}

export function authRoutes(app: FastifyInstance, context: DashboardContext): void {
  const { storage, clock, limiters, sessions } = context

  app.get('/', { config: { dashboard: 'public' } }, (request, reply) => reply.redirect(request.account ? home(request.account.role) : '/dashboard/login', 303))

  app.get('/signup', { config: { dashboard: 'public' } }, (request, reply) => sendPage(request, reply, 'Create a partner account', signUpForm(request, {})))

  app.post('/signup', { config: { dashboard: 'public' } }, async (request, reply) => {
    const body = request.body as FormBody
    const email = normaliseEmail(text(body, 'email'))
    const password = text(body, 'password')
    const errors: FieldErrors = {}
    if (!isEmail(email)) errors.email = 'Enter an e-mail address like name@example.org.'
    const weak = passwordProblem(password, email)
    if (weak !== null) errors.password = weak
    if (errors.email === undefined && (await findAccountByEmail(storage.db, email)) !== undefined) {
      errors.email = 'An account with this e-mail address exists already. Sign in instead.'
    }
    if (Object.keys(errors).length > 0) return sendPage(request, reply, 'Create a partner account', signUpForm(request, { email }, errors), 400)
    // Each sign-up creates data (a sandbox); limit how fast one address can make them.
    const attempt = await limiters.signInFailuresByAddress.hit(request.ip)
    if (!attempt.allowed) tooMany(attempt.resetMs)

    const now = clock.now()
    const passwordHash = await hashPassword(password)
    const { account, key } = await inTransaction(storage.db, async (trx) => {
      const sandbox = await createSandbox(trx, email, now)
      const account = await createAccount(trx, { email, passwordHash, role: 'partner', sandboxOrganisationId: sandbox.id }, now)
      const key = await createApiKey(
        trx,
        { organisationId: sandbox.id, name: 'first test key', scopes: ['students:read', 'students:write'], expiresAt: null, mode: 'test', createdBy: account.id },
        now,
      )
      return { account, key }
    })
    await sessions.signIn(request, reply, account)
    return newKeyPage(request, reply, context, { key: key.key, row: key.row, welcome: true })
  })

  app.get('/login', { config: { dashboard: 'public' } }, (request, reply) => {
    if (request.account) return reply.redirect(home(request.account.role), 303)
    const next = safeNext(String((request.query as Record<string, unknown>).next ?? ''))
    return sendPage(request, reply, 'Sign in', signInForm(request, { ...(next ? { next } : {}) }))
  })

  app.post('/login', { config: { dashboard: 'public' } }, async (request, reply) => {
    const body = request.body as FormBody
    const email = normaliseEmail(text(body, 'email'))
    const password = text(body, 'password')
    const next = safeNext(text(body, 'next'))
    const [byAddress, byAccount] = await Promise.all([limiters.signInFailuresByAddress.peek(request.ip), limiters.signInFailuresByAccount.peek(email)])
    if (!byAddress.allowed || !byAccount.allowed) tooMany(Math.max(byAddress.allowed ? 0 : byAddress.resetMs, byAccount.allowed ? 0 : byAccount.resetMs))

    const account = email === '' ? undefined : await findAccountByEmail(storage.db, email)
    // Hash even when there is no account, so timing does not tell which e-mails exist.
    const matches = await verifyPassword(password, account?.password_hash ?? DUMMY_HASH)
    if (account === undefined || !matches) {
      await Promise.all([limiters.signInFailuresByAddress.hit(request.ip), limiters.signInFailuresByAccount.hit(email)])
      const errors = { email: 'The e-mail address or the password is not right.' }
      return sendPage(request, reply, 'Sign in', signInForm(request, { email, ...(next ? { next } : {}) }, errors), 401)
    }
    await sessions.signIn(request, reply, account)
    return reply.redirect(next ?? home(account.role), 303)
  })

  app.post('/logout', { config: { dashboard: 'public' } }, async (request, reply) => {
    await sessions.signOut(request, reply)
    return reply.redirect('/dashboard/login?notice=signed-out', 303)
  })
}

function tooMany(resetMs: number): never {
  const seconds = Math.max(1, Math.ceil(resetMs / 1000))
  throw new DashboardError(429, 'Too many attempts', `Too many attempts from here or for this account. Try again in ${Math.ceil(seconds / 60)} minutes.`, {
    'retry-after': String(seconds),
  })
}
