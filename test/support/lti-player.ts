/**
 * The lesson player's tests start where a launch ends: a registered, active test platform of an
 * organisation, the student a launch of `sub` makes, and the sealed session the launch redirects
 * to (minted here as the launch mints it). `post` sends a player form as a browser does.
 */
import { studentForLaunch } from '../../src/cases/lti-students.js'
import { sharedSecret } from '../../src/cases/shared-settings.js'
import {
  type LtiRole,
  type PlayerSession,
  playerKey,
  SESSION_MS,
  sealPlayerSession,
} from '../../src/domain/lti-player-session.js'
import type { TierId } from '../../src/domain/tiers.js'
import { PLAYER_KEY_SETTING } from '../../src/lti/lesson-player.js'
import type { LtiRegistrationRow } from '../../src/storage/tables.js'
import type { TestContext } from '../helper.js'
import type { HttpRequest } from './http-client.js'
import { TestPlatform } from './lti-platform.js'
import { registerPlatform } from './lti.js'

/** A lesson with every kind of slide (bullets, vocabulary, code, activity, quiz). */
export const ALL_KINDS_LESSON = 'innovator/i1-hello-python'

export interface PlayerLaunch {
  token: string
  /** Null when the launch had no `sub`. */
  studentId: string | null
}

export class PlayerFixture {
  platform!: TestPlatform
  registration!: LtiRegistrationRow

  constructor(readonly t: TestContext) {}

  /** Starts the test platform and registers it for `organisationId` (acme, with an agreement, by default). */
  async start(organisationId = this.t.fixtures.orgs.acme): Promise<this> {
    this.platform = await new TestPlatform().start()
    this.registration = await registerPlatform(this.t.storage, this.t.clock, this.platform, {
      organisationId,
      toolBase: this.t.base,
    })
    return this
  }

  async stop(): Promise<void> {
    await this.platform?.stop()
  }

  /** What a launch of `sub` (null: none) into `lessonSlug` redirects to the player with. */
  async launch(
    options: { sub?: string | null; givenName?: string; lessonSlug?: string; roles?: LtiRole[] } = {},
  ): Promise<PlayerLaunch> {
    const lessonSlug = options.lessonSlug ?? ALL_KINDS_LESSON
    const sub = options.sub === undefined ? 'learner-1' : options.sub
    const roles = options.roles ?? ['learner']
    const studentId =
      sub === null || !roles.includes('learner')
        ? null
        : (
            await studentForLaunch(
              this.t.storage.db,
              this.registration,
              { sub, givenName: options.givenName ?? 'Maya', tier: lessonSlug.split('/')[0] as TierId },
              this.t.clock.now(),
            )
          ).studentId
    const token = await sealedSession(this.t, {
      registrationId: this.registration.id,
      studentId,
      resourceLinkId: 'link-1',
      lessonSlug,
      roles,
      expiresAt: this.t.clock.now() + SESSION_MS,
    })
    return { token, studentId }
  }
}

export async function sealedSession(t: TestContext, session: PlayerSession): Promise<string> {
  return sealPlayerSession(playerKey(await sharedSecret(t.storage.db, PLAYER_KEY_SETTING)), session)
}

/** A player form as a browser posts it. */
export function playerForm(fields: Record<string, string | number>): HttpRequest {
  return {
    method: 'POST',
    url: '/lti/lesson',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams(Object.entries(fields).map(([name, value]) => [name, String(value)])).toString(),
  }
}

/** The page's text without its markup, spaces collapsed: what a reader of it sees. */
export function textOf(page: string): string {
  return page
    .replace(/<(script|style)[\s\S]*?<\/\1>/g, '')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#(\d+);/g, (_m, code: string) => String.fromCharCode(Number(code)))
    .replace(/&quot;/g, '"')
    .replace(/&#x27;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim()
}
