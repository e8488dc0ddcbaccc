/**
 * The sections a registration's page shows after its deployments, each a function of the
 * registration that renders its own h2 and forms. LTI features that report on a registration (its
 * scores for the gradebook) add theirs here; the page itself knows none of them.
 */
import type { FastifyRequest } from 'fastify'
import type { RegistrationSummary } from '../../../../storage/lti-registration-list-repository.js'
import type { DashboardContext } from '../../../dashboard-context.js'
import type { Html } from '../../../html.js'

export type RegistrationSection = (
  request: FastifyRequest,
  context: DashboardContext,
  summary: RegistrationSummary,
) => Promise<Html>

export const REGISTRATION_SECTIONS: readonly RegistrationSection[] = []
