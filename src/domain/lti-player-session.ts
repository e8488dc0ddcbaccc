/**
 * What a launched lesson carries from page to page instead of a cookie (a launch is a cross-site
 * POST, often inside the platform's iframe, where third-party cookies are blocked): the launch's
 * registration, student and lesson, sealed under a key the instances share (AES-256-GCM,
 * domain/sealed-secret.ts), so it can be neither read nor altered, and ending after SESSION_MS.
 */
import { openSecret, purposeKey, sealSecret } from './sealed-secret.js'

/** A class period and then some: a lesson left open over lunch still records. */
export const SESSION_MS = 8 * 3_600_000

export type LtiRole = 'learner' | 'instructor' | 'administrator'

export interface PlayerSession {
  registrationId: string
  /** Null when the launch had no `sub`: the lesson is shown and nothing is recorded. */
  studentId: string | null
  resourceLinkId: string | null
  lessonSlug: string
  roles: LtiRole[]
  /** Milliseconds since the epoch. */
  expiresAt: number
}

const CONTEXT = 'lti-player'

export function playerKey(master: Buffer): Buffer {
  return purposeKey(master, 'lti-player-session')
}

export function sealPlayerSession(key: Buffer, session: PlayerSession): string {
  return sealSecret(key, CONTEXT, JSON.stringify(session))
}

/** The session, or undefined when `sealed` is not one of ours, was altered, or has ended at `now`. */
export function openPlayerSession(key: Buffer, sealed: string, now: number): PlayerSession | undefined {
  if (sealed.length > 4096) return undefined
  const text = openSecret(key, CONTEXT, sealed)
  if (text === undefined) return undefined
  const session = JSON.parse(text) as PlayerSession
  return session.expiresAt > now ? session : undefined
}
