/**
 * The LTI 1.3 tool under /lti (docs/lti.md): the key set platforms check our signatures with,
 * dynamic registration, login initiation, launches, the lesson player and deep linking.
 *
 * Encapsulated like the dashboard: its form parser and headers apply here only. Launches are
 * cross-site POSTs, often inside a platform's iframe, so nothing here depends on a cookie: the
 * state and nonce of a login are kept server-side, and a launched lesson carries its own sealed
 * token in its forms.
 */
import type { FastifyInstance } from 'fastify'
import type { Clock } from '../clock.js'
import type { ToolKeys } from '../services/lti-tool-keys.js'
import type { Storage } from '../storage/connection.js'
import { launchRoutes } from './launch-routes.js'
import { lessonPlayer } from './lesson-player.js'
import { registrationRoutes } from './registration.js'

export const LTI_PREFIX = '/lti'
export const LTI_JWKS_PATH = `${LTI_PREFIX}/jwks`

export interface LtiDeps {
  storage: Storage
  clock: Clock
  toolKeys: ToolKeys
  /** Where the service is reached from outside: the tool's URLs are made from it. */
  publicUrl: string
  /** Local development and tests only: platforms on this machine (loopback, plain http) are accepted. */
  allowLoopback: boolean
}

export async function ltiPlugin(app: FastifyInstance, deps: LtiDeps): Promise<void> {
  await app.register(lessonPlayer, { storage: deps.storage, clock: deps.clock, allowLoopback: deps.allowLoopback })
  await app.register(registrationRoutes, { ...deps, prefix: '' })
  await app.register(launchRoutes, { deps })
  app.get(
    '/jwks',
    {
      schema: {
        hide: true,
      },
    },
    async (_request, reply) =>
      reply
        // Short: platforms fetch it again on an unknown kid, and a rotation must reach them soon.
        .header('cache-control', 'public, max-age=300')
        .type('application/jwk-set+json')
        .send(JSON.stringify(await deps.toolKeys.keySet())),
  )
}
