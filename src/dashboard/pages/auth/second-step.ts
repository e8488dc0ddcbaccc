/**
 * The sign-in's second step, `/dashboard/sign-in/code`: a session whose password was right and
 * whose account has a second factor enters a code from its authenticator app, or a recovery code,
 * within 10 minutes (PENDING_SESSION_LIFETIME_MS). The case counts every code against the
 * account's guess limit; at the limit the waiting session ends and the refusal page says how long
 * to wait. A right code ends the waiting session and starts a full one under a new token.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { type CodeCheck, secondFactorKey, useRecoveryCode, verifyTotpCode } from '../../../cases/second-factor.js'
import { normaliseTotpCode } from '../../../domain/totp.js'
import { countPasskeys } from '../../../storage/passkey-repository.js'
import type { PagePlugin } from '../../dashboard-context.js'
import { DashboardError } from '../../dashboard-error.js'
import { type FormBody, text } from '../../forms.js'
import { sendPage } from '../../send-page.js'
import { waitOf } from '../../times.js'
import { home, safeNext } from './next.js'
import { codeForm, recoveryCodeUsed } from './second-step-views.js'

const codeStep = { config: { dashboard: 'public' as const, twoStep: 'code' as const } }
const TITLE = 'Enter your code'

/** What a refused code's field error says: why, and how many tries are left before the limit. */
function refusal(check: Extract<CodeCheck, { reason: 'wrong' | 'replayed' }>): string {
  const why =
    check.reason === 'replayed'
      ? 'That code was used already. Wait for the next code your app shows.'
      : 'That code is not right.'
  const tries = check.attemptsLeft === 1 ? '1 more try' : `${check.attemptsLeft} more tries`
  return `${why} ${tries}, then codes are refused for up to 15 minutes.`
}

export const secondStepPages: PagePlugin = async (app, { context }) => {
  const { storage, clock, sessions } = context
  const store = { db: storage.db, key: await secondFactorKey(storage.db) }

  /** Where a request without a waiting session goes: home when signed in, else back to sign in. */
  function elsewhere(request: FastifyRequest, reply: FastifyReply): FastifyReply {
    const to = request.account ? home(request.account.role) : '/dashboard/login?notice=two-step-expired'
    return reply.redirect(to, 303)
  }

  app.get('/sign-in/code', codeStep, async (request, reply) => {
    if (request.awaitingCode === null) return elsewhere(request, reply)
    const next = safeNext(String((request.query as Record<string, unknown>).next ?? ''))
    const passkeys = (await countPasskeys(storage.db, request.awaitingCode.id)) > 0
    return sendPage(request, reply, TITLE, codeForm(request, { next, passkeys }))
  })

  app.post('/sign-in/code', codeStep, async (request, reply) => {
    const account = request.awaitingCode
    if (account === null) return elsewhere(request, reply)
    const body = request.body as FormBody
    const next = safeNext(text(body, 'next'))
    const code = text(body, 'code')
    if (code === '') {
      const errors = { code: 'Enter the code from your authenticator app, or a recovery code.' }
      return sendPage(request, reply, TITLE, codeForm(request, { next }, errors), 400)
    }
    const now = clock.now()
    // Six digits are the app's code; anything else can only be a recovery code.
    const check =
      normaliseTotpCode(code) !== null
        ? await verifyTotpCode(store, account, code, now)
        : await useRecoveryCode(store, account, code, now)
    if (check.ok) {
      // A new token for the full session; signIn ends the waiting one, whose token is worth nothing now.
      await sessions.signIn(request, reply, account)
      const to = next ?? home(account.role)
      if ('codesLeft' in check && typeof check.codesLeft === 'number')
        return sendPage(request, reply, 'Recovery code used', recoveryCodeUsed(check.codesLeft, to))
      return reply.redirect(to, 303)
    }
    if (check.reason === 'not_enrolled') {
      // The factor was removed meanwhile: the password alone is asked again.
      await sessions.signOut(request, reply)
      return reply.redirect('/dashboard/login?notice=two-step-expired', 303)
    }
    if (check.reason === 'locked' || check.lockedUntil !== null) {
      await sessions.signOut(request, reply)
      const wait = waitOf(check.lockedUntil! - now)
      throw new DashboardError(
        429,
        'Too many wrong codes',
        `Too many wrong codes for this account. Codes are refused for ${wait.text}; then sign in again.`,
        { 'retry-after': String(wait.seconds) },
      )
    }
    return sendPage(request, reply, TITLE, codeForm(request, { next }, { code: refusal(check) }), 400)
  })
}
