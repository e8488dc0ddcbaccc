/**
 * The sections a registration's page shows after its deployments, each a function of the
 * registration that renders its own h2 and forms. LTI features that report on a registration (its
 * scores for the gradebook) add theirs here; the page itself knows none of them.
 */
import type { FastifyRequest } from 'fastify'
import { scoreCountsOfRegistration } from '../../../../storage/lti-score-repository.js'
import type { RegistrationSummary } from '../../../../storage/lti-registration-list-repository.js'
import type { DashboardContext } from '../../../dashboard-context.js'
import { type Html, html } from '../../../html.js'

export type RegistrationSection = (
  request: FastifyRequest,
  context: DashboardContext,
  summary: RegistrationSummary,
) => Promise<Html>

const STATES = ['pending', 'sent', 'failed', 'cancelled'] as const

/** Its scores for the platform's gradebook, by state, each state linked to the scores page. */
const scores: RegistrationSection = async (_request, context, summary) => {
  const counts = await scoreCountsOfRegistration(context.storage.db, summary.registration.id)
  const items = STATES.map(
    (state) =>
      html`<li><a href="/dashboard/operator/lti/scores?state=${state}">${state}</a>: ${counts[state] ?? 0}</li>`,
  )
  return html`<h2>Scores for the gradebook</h2><ul>${items}</ul>`
}

export const REGISTRATION_SECTIONS: readonly RegistrationSection[] = [scores]
