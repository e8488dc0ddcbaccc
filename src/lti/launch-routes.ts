/**
 * The launch side of the tool: login initiation, the launch, and deep linking's answer, with what
 * they share (the platforms' key sets, the keys that seal a player session and a picker).
 */
import type { FastifyInstance } from 'fastify'
import { sharedSecret } from '../cases/shared-settings.js'
import { deepLinkingKey } from '../domain/lti-deep-linking.js'
import { playerKey } from '../domain/lti-player-session.js'
import { PlatformKeys } from '../services/lti-platform-keys.js'
import { deepLinkRoute } from './deep-link-route.js'
import { launchRoute } from './launch-route.js'
import { loginRoutes } from './login-route.js'
import type { LaunchContext, LaunchDeps } from './launch-context.js'

/** Registered by the /lti plugin; its deps come wrapped so that the plugin's `prefix` option is not passed on. */
export async function launchRoutes(app: FastifyInstance, { deps }: { deps: LaunchDeps }): Promise<void> {
  const db = deps.storage.db
  const context: LaunchContext = {
    deps,
    platformKeys: new PlatformKeys({ clock: deps.clock, allowHttp: deps.allowLoopback }),
    playerKey: playerKey(await sharedSecret(db, 'lti-player-key')),
    deepLinkingKey: deepLinkingKey(await sharedSecret(db, 'lti-deep-linking-key')),
  }
  await loginRoutes(app, deps)
  launchRoute(app, context)
  deepLinkRoute(app, context)
}
