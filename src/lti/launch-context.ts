/**
 * What the launch routes share: the tool's dependencies (those of the /lti plugin, named here so
 * that these routes need not import the plugin that registers them), the platforms' key sets, and
 * the keys that seal a player session and a lesson picker.
 */
import type { Clock } from '../clock.js'
import type { PlatformKeys } from '../services/lti-platform-keys.js'
import type { ToolKeys } from '../services/lti-tool-keys.js'
import type { Storage } from '../storage/connection.js'

export interface LaunchDeps {
  storage: Storage
  clock: Clock
  toolKeys: ToolKeys
  /** PUBLIC_URL: the tool's URLs are made from it, and a link must be under its /lti/. */
  publicUrl: string
  /** Development and tests only: platforms on plain http are accepted. */
  allowLoopback: boolean
}

export interface LaunchContext {
  deps: LaunchDeps
  platformKeys: PlatformKeys
  playerKey: Buffer
  deepLinkingKey: Buffer
}
