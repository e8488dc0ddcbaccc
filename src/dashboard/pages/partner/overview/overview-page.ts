/**
 * Sends the overview; the key form's handler sends it too, with the refused form kept
 * (keys/index.ts), so it lives apart from the overview's route.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { agreementEnds } from '../../../../storage/agreement-end-repository.js'
import { applicationsOf } from '../../../../storage/application-repository.js'
import { sandboxStudents } from '../../../../storage/sandbox-repository.js'
import type { DashboardContext } from '../../../dashboard-context.js'
import { sendPage } from '../../../send-page.js'
import type { KeyFormState } from '../keys/views.js'
import { ownKeys, type PartnerView } from '../partner-view.js'
import { overviewBody } from './views.js'

export async function sendOverview(
  request: FastifyRequest,
  reply: FastifyReply,
  context: DashboardContext,
  v: PartnerView,
  keyForm?: KeyFormState,
  status = 200,
): Promise<FastifyReply> {
  const db = context.storage.db
  const now = context.clock.now()
  const [applications, keys, students, ends] = await Promise.all([
    applicationsOf(db, v.account.id),
    ownKeys(context, v),
    sandboxStudents(db, v.sandboxId),
    v.organisation === undefined ? [] : agreementEnds(db, now, v.organisation.id),
  ])
  const body = overviewBody(request, v, { application: applications[0], keys, students, ends, now }, keyForm)
  return sendPage(request, reply, 'Overview', body, status, '/dashboard/partner')
}
