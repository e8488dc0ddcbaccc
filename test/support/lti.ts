/**
 * LTI set-up shared by the LTI tests: a test platform registered by hand with the tool (and
 * activated unless asked not to), as an operator would in the dashboard.
 */
import { activateRegistration, recordRegistration } from '../../src/cases/lti-registrations.js'
import type { Clock } from '../../src/clock.js'
import { AGS_SCOPE } from '../../src/domain/lti-claims.js'
import type { Storage } from '../../src/storage/connection.js'
import type { LtiRegistrationRow } from '../../src/storage/tables.js'
import type { TestPlatform } from './lti-platform.js'

export const OPERATOR = { actor: 'account:operator@example.org' }

export async function registerPlatform(
  storage: Storage,
  clock: Clock,
  platform: TestPlatform,
  options: { organisationId: string; schoolId?: string | null; toolBase: string; activate?: boolean },
): Promise<LtiRegistrationRow> {
  const values = platform.manualValues()
  platform.toolJwksUri = `${options.toolBase}/lti/jwks`
  const registration = await recordRegistration(
    storage.db,
    {
      organisationId: options.organisationId,
      schoolId: options.schoolId ?? null,
      linkId: null,
      method: 'manual',
      name: 'Test platform',
      issuer: values.issuer,
      clientId: values.clientId,
      authLoginUrl: values.authLoginUrl,
      tokenUrl: values.tokenUrl,
      tokenAudience: null,
      jwksUri: values.jwksUri,
      product: platform.product,
      scopes: [AGS_SCOPE.lineItem, AGS_SCOPE.score],
      deploymentIds: [values.deploymentId],
    },
    OPERATOR,
    clock,
  )
  if (options.activate === false) return registration
  return activateRegistration(storage.db, registration.id, OPERATOR, clock)
}
