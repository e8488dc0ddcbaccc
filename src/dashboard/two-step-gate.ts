/**
 * What a session may reach before its second factor (docs/security.md, "Second factor"):
 *
 * - A session waiting for its code (the password was right, the account has a factor) reaches the
 *   code page and sign-out only: any other page redirects there (GET) or is refused (POST).
 * - An operator account without a confirmed second factor reaches the Account page, the
 *   enrolment pages and sign-out only: operator pages redirect to enrolment (GET) or are refused.
 *   So does a partner whose current organisation's owners require a second factor of its members.
 *
 * Routes say which they are by `config.twoStep`; everything else is closed to both.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Kysely } from 'kysely'
import { hasSecondFactor } from '../cases/second-factor.js'
import { organisationById } from '../storage/access-repository.js'
import { roleIn } from '../storage/membership-repository.js'
import type { AccountRow, Database } from '../storage/tables.js'
import { DashboardError } from './dashboard-error.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** `code`: the sign-in's second step; `setup`: enrolment and the Account page; `always`: sign-out. */
    twoStep?: 'code' | 'setup' | 'always'
  }
}

export const CODE_PATH = '/dashboard/sign-in/code'
export const ENROL_PATH = '/dashboard/account/two-step'

const READS = new Set(['GET', 'HEAD'])

/** Redirects or refuses a request its session may not make yet; undefined when it may. */
export async function twoStepGate(
  request: FastifyRequest,
  reply: FastifyReply,
  db: Kysely<Database>,
): Promise<FastifyReply | undefined> {
  const allowed = request.routeOptions.config.twoStep
  // The stylesheet and script of every page, the code page's too.
  if (allowed === 'always' || request.url.startsWith('/dashboard/assets/')) return undefined
  if (request.awaitingCode !== null) {
    if (allowed === 'code') return undefined
    if (READS.has(request.method)) return reply.redirect(CODE_PATH, 303)
    throw new DashboardError(
      403,
      'Enter your code first',
      'This session is waiting for the code from your authenticator app. Enter it, or sign out.',
    )
  }
  const account = request.account
  if (account === null || allowed === 'setup') return undefined
  const access = request.routeOptions.config.dashboard
  if (access === undefined || access === 'public') return undefined
  const requiredBy = account.role === 'operator' ? 'operator' : await organisationRequiring(db, account)
  if (requiredBy === undefined || (await hasSecondFactor(db, account.id))) return undefined
  const notice = requiredBy === 'operator' ? 'two-step-required' : 'two-step-required-org'
  if (READS.has(request.method)) return reply.redirect(`${ENROL_PATH}?notice=${notice}`, 303)
  throw new DashboardError(
    403,
    'Two-step sign-in first',
    requiredBy === 'operator'
      ? 'Operator accounts reach children’s data, so they need two-step sign-in. Set it up on your Account page first.'
      : `${requiredBy} requires two-step sign-in of its members. Set it up on your Account page first.`,
  )
}

/** The name of the partner's current organisation if it requires a second factor of its members. */
async function organisationRequiring(db: Kysely<Database>, account: AccountRow): Promise<string | undefined> {
  if (account.organisation_id === null) return undefined
  const organisation = await organisationById(db, account.organisation_id)
  if (organisation?.require_second_factor !== 1) return undefined
  return (await roleIn(db, organisation.id, account.id)) === undefined ? undefined : organisation.name
}
