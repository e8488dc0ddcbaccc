/**
 * The launch side of the tool: login initiation, the launch, and deep linking's answer, with what
 * they share (the platforms' key sets, the keys that seal a player session and a picker). An
 * encapsulated plugin: its form parser, headers and refusal pages apply to these routes only.
 */
import type { FastifyInstance } from 'fastify'
import { sharedSecret } from '../cases/shared-settings.js'
import { deepLinkingKey } from '../domain/lti-deep-linking.js'
import { playerKey } from '../domain/lti-player-session.js'
import { PlatformKeys } from '../services/lti-platform-keys.js'
import { deepLinkRoute } from './deep-link-route.js'
import { launchRoute } from './launch-route.js'
import { PLAYER_KEY_SETTING } from './lesson-player.js'
import { loginRoutes } from './login-route.js'
import { answerWithPages } from './lti-answers.js'
import type { LaunchContext, LaunchDeps } from './launch-context.js'

/** Registered by the /lti plugin; its deps come wrapped so that the plugin's `prefix` option is not passed on. */
export async function launchRoutes(app: FastifyInstance, { deps }: { deps: LaunchDeps }): Promise<void> {
  const db = deps.storage.db
  const context: LaunchContext = {
    deps,
    platformKeys: new PlatformKeys({ clock: deps.clock, allowLoopback: deps.allowLoopback }),
    playerKey: playerKey(await sharedSecret(db, PLAYER_KEY_SETTING)),
    deepLinkingKey: deepLinkingKey(await sharedSecret(db, 'lti-deep-linking-key')),
  }
  answerWithPages(app, { allowHttp: deps.allowLoopback })
  await loginRoutes(app, deps)
  launchRoute(app, context)
  deepLinkRoute(app, context)
}
