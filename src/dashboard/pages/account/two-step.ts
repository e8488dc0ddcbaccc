/**
 * Two-step sign-in's Account pages: set up (a pending authenticator, confirmed by a code from it),
 * regenerate the recovery codes, turn it off. The last two ask for a current code (from the app,
 * or a recovery code) rather than the password: they change the factor itself, so they ask for
 * the factor, and a password seen over a shoulder with a session left open is not enough. The
 * case audits each change and counts each code against the account's guess limit.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import {
  beginTotpEnrolment,
  confirmTotpEnrolment,
  pendingTotpEnrolment,
  regenerateRecoveryCodes,
  removeTotp,
  secondFactorKey,
  secondFactorStatus,
  type SecondFactorStore,
  useRecoveryCode,
  verifyTotpCode,
} from '../../../cases/second-factor.js'
import { normaliseTotpCode } from '../../../domain/totp.js'
import type { FastifyPluginAsync } from 'fastify'
import type { PageOptions } from '../../dashboard-context.js'
import { type FieldErrors, type FormBody, text } from '../../forms.js'
import { sendPage } from '../../send-page.js'
import { waitOf } from '../../times.js'
import { ENROL_PATH } from '../../two-step-gate.js'
import { ACCOUNT_PATH } from './views.js'
import { noticeContext } from '../../notice-context.js'
import { enrolBody, recoveryCodesBody } from './two-step-views.js'

const setup = { config: { dashboard: 'signed-in' as const, twoStep: 'setup' as const } }
const TITLE = 'Set up two-step sign-in'

/** Checks a current code of the account's factor; the field error when it is refused, else null. */
export async function currentCodeProblem(
  store: SecondFactorStore,
  request: FastifyRequest,
  code: string,
  now: number,
): Promise<string | null> {
  if (code === '') return 'Enter the code your app shows now, or a recovery code.'
  const account = request.account!
  const check =
    normaliseTotpCode(code) !== null
      ? await verifyTotpCode(store, account, code, now)
      : await useRecoveryCode(store, account, code, now)
  if (check.ok) return null
  if (check.reason === 'not_enrolled') return 'Two-step sign-in is off already.'
  if (check.reason === 'locked' || check.lockedUntil !== null)
    return `Too many wrong codes: codes are refused for ${waitOf(check.lockedUntil! - now).text}.`
  if (check.reason === 'replayed') return 'That code was used already. Wait for the next one your app shows.'
  return `That code is not right. ${check.attemptsLeft} more tries, then codes are refused for up to 15 minutes.`
}

/** The Account page again, with a refused code's field error in its two-step section. */
type ShowAccount = (request: FastifyRequest, reply: FastifyReply, errors: FieldErrors) => Promise<FastifyReply>

export const twoStepPages: FastifyPluginAsync<PageOptions & { showAccount: ShowAccount }> = async (
  app,
  { context, showAccount },
) => {
  const { storage, clock } = context
  const store: SecondFactorStore = { db: storage.db, key: await secondFactorKey(storage.db) }
  const home = (request: FastifyRequest) =>
    request.account!.role === 'operator' ? '/dashboard/operator/applications' : ACCOUNT_PATH

  app.get('/account/two-step', setup, async (request, reply) => {
    const status = await secondFactorStatus(storage.db, request.account!.id, clock.now())
    if (status.totp === 'confirmed') return reply.redirect(`${ACCOUNT_PATH}#two-step`, 303)
    const enrolment = await pendingTotpEnrolment(store, request.account!)
    return sendPage(request, reply, TITLE, enrolBody(request, enrolment), 200, ACCOUNT_PATH)
  })

  app.post('/account/two-step/begin', setup, async (request, reply) => {
    await beginTotpEnrolment(store, request.account!, clock.now())
    return reply.redirect(ENROL_PATH, 303)
  })

  app.post('/account/two-step/confirm', setup, async (request, reply) => {
    const code = text(request.body as FormBody, 'code')
    const confirmed = await confirmTotpEnrolment(store, request.account!, code, clock.now(), noticeContext(context))
    if (!confirmed.ok) {
      const enrolment = await pendingTotpEnrolment(store, request.account!)
      const errors = { code: 'That code is not right. Enter the 6 digits the app shows now for this account.' }
      return sendPage(request, reply, TITLE, enrolBody(request, enrolment, errors), 400, ACCOUNT_PATH)
    }
    const body = recoveryCodesBody(confirmed.recoveryCodes, home(request), true)
    return sendPage(request, reply, 'Your recovery codes', body, 200, ACCOUNT_PATH)
  })

  app.post('/account/two-step/recovery-codes', setup, async (request, reply) => {
    const problem = await currentCodeProblem(
      store,
      request,
      text(request.body as FormBody, 'regenerateCode'),
      clock.now(),
    )
    if (problem !== null) return showAccount(request, reply, { regenerateCode: problem })
    const codes = await regenerateRecoveryCodes(store, request.account!, clock.now())
    return sendPage(
      request,
      reply,
      'Your recovery codes',
      recoveryCodesBody(codes, ACCOUNT_PATH, false),
      200,
      ACCOUNT_PATH,
    )
  })

  app.post('/account/two-step/remove', setup, async (request, reply) => {
    const problem = await currentCodeProblem(store, request, text(request.body as FormBody, 'removeCode'), clock.now())
    if (problem !== null) return showAccount(request, reply, { removeCode: problem })
    await removeTotp(storage.db, request.account!, clock.now(), undefined, noticeContext(context))
    return reply.redirect(`${ACCOUNT_PATH}?notice=two-step-off`, 303)
  })
}
