/**
 * The passkey ceremonies, in JSON for the dashboard's script (passkey-script.ts): options, then
 * the browser's answer, for adding a passkey (Account page), signing in without a password, and
 * the sign-in's second step. A refusal answers `{ message }` with its status; success
 * `{ redirect }`. Removing a passkey is a plain form.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import {
  authenticationOptions,
  PasskeyRefused,
  registerPasskey,
  registrationOptions,
  relyingParty,
  removePasskey,
  verifyPasskey,
} from '../../../cases/passkeys.js'
import type { PagePlugin } from '../../dashboard-context.js'
import { DashboardError } from '../../dashboard-error.js'
import { noticeContext } from '../../notice-context.js'
import { ACCOUNT_PASSKEYS, PASSKEY_SECOND_STEP, PASSKEY_SIGN_IN } from '../../views/passkey-forms.js'
import { home, safeNext } from '../auth/next.js'

/** A dashboard address as this page group registers it (the dashboard plugin adds `/dashboard`). */
const own = (path: string) => path.slice('/dashboard'.length)

const visitor = { config: { dashboard: 'public' as const } }
const codeStep = { config: { dashboard: 'public' as const, twoStep: 'code' as const } }
const setup = { config: { dashboard: 'signed-in' as const, twoStep: 'setup' as const } }

/** The JSON a ceremony's form posts: its fields (strings) and, with the answer, the browser's response. */
type CeremonyBody = Record<string, unknown> & { response?: unknown }

function bodyOf(request: FastifyRequest): CeremonyBody {
  if (!request.headers['content-type']?.startsWith('application/json'))
    throw new DashboardError(
      400,
      'Passkeys need JavaScript',
      'Your browser asks the device for a passkey, which needs JavaScript: turn it on, or use your password.',
    )
  return (request.body ?? {}) as CeremonyBody
}

async function answer(reply: FastifyReply, work: () => Promise<string>): Promise<FastifyReply> {
  try {
    return reply.send({ redirect: await work() })
  } catch (error) {
    if (error instanceof PasskeyRefused)
      return reply.code(error.reason === 'used' ? 409 : 400).send({ message: error.message })
    throw error
  }
}

export const passkeyPages: PagePlugin = async (app, { context }) => {
  const { storage, clock, sessions, mail } = context
  const db = storage.db
  const rp = relyingParty(mail.publicUrl)

  app.post(`${own(PASSKEY_SIGN_IN)}/options`, visitor, async (request) => {
    bodyOf(request)
    return authenticationOptions(db, null, rp, clock.now())
  })

  app.post(own(PASSKEY_SIGN_IN), visitor, async (request, reply) => {
    const body = bodyOf(request)
    return answer(reply, async () => {
      const account = await verifyPasskey(db, body.response as never, null, rp, clock.now())
      await sessions.signIn(request, reply, account)
      return safeNext(String(body.next ?? '')) ?? home(account.role)
    })
  })

  app.post(`${own(PASSKEY_SECOND_STEP)}/options`, codeStep, async (request, reply) => {
    bodyOf(request)
    const account = request.awaitingCode
    if (account === null) return reply.code(409).send({ message: 'Sign in again: the second step has ended.' })
    return authenticationOptions(db, account.id, rp, clock.now())
  })

  app.post(own(PASSKEY_SECOND_STEP), codeStep, async (request, reply) => {
    const body = bodyOf(request)
    const waiting = request.awaitingCode
    if (waiting === null) return reply.code(409).send({ message: 'Sign in again: the second step has ended.' })
    return answer(reply, async () => {
      const account = await verifyPasskey(db, body.response as never, waiting.id, rp, clock.now())
      await sessions.signIn(request, reply, account)
      return safeNext(String(body.next ?? '')) ?? home(account.role)
    })
  })

  app.post(`${own(ACCOUNT_PASSKEYS)}/options`, setup, async (request) => {
    bodyOf(request)
    return registrationOptions(db, request.account!, rp, clock.now())
  })

  app.post(own(ACCOUNT_PASSKEYS), setup, async (request, reply) => {
    const body = bodyOf(request)
    return answer(reply, async () => {
      const name = String(body.passkeyName ?? '')
      const response = { name, response: body.response as never }
      await registerPasskey(db, request.account!, response, rp, clock.now(), noticeContext(context))
      return '/dashboard/account?notice=passkey-added#passkeys'
    })
  })

  app.post(`${own(ACCOUNT_PASSKEYS)}/:id/remove`, setup, async (request, reply) => {
    const { id } = request.params as { id: string }
    const removed = await removePasskey(db, request.account!, id, clock.now(), noticeContext(context))
    return reply.redirect(`/dashboard/account?notice=${removed ? 'passkey-removed' : 'passkey-gone'}#passkeys`, 303)
  })
}
