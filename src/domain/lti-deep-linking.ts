/**
 * Deep Linking 2.0: the picker's session, sealed into its form (the request is a cross-site POST
 * inside the platform's iframe, so no cookie could carry it), and the claims of the response the
 * tool signs: one `ltiResourceLink` per chosen lesson, its slug in `custom.lesson` (what a launch
 * of the link opens) and a line item out of 100 named by the slug.
 */
import { randomBytes } from 'node:crypto'
import { CLAIM, LTI_VERSION, MESSAGE } from './lti-claims.js'
import { openSecret, purposeKey, sealSecret } from './sealed-secret.js'

/** Long enough to browse the catalog; a picker left open longer is opened again from the course. */
export const DEEP_LINKING_MS = 3_600_000

/** What the response needs of the request, kept in the picker's form. */
export interface DeepLinkingSession {
  registrationId: string
  deploymentId: string
  returnUrl: string
  data: string | null
  acceptTypes: string[]
  acceptMultiple: boolean
  /** Milliseconds since the epoch. */
  expiresAt: number
}

/** The content item type the tool answers with. */
export const RESOURCE_LINK_ITEM = 'ltiResourceLink'

const CONTEXT = 'lti-deep-linking'

export function deepLinkingKey(master: Buffer): Buffer {
  return purposeKey(master, 'lti-deep-linking-session')
}

export function sealDeepLinkingSession(key: Buffer, session: DeepLinkingSession): string {
  return sealSecret(key, CONTEXT, JSON.stringify(session))
}

/** The session, or undefined when `sealed` is not one of ours, was altered, or has ended at `now`. */
export function openDeepLinkingSession(key: Buffer, sealed: string, now: number): DeepLinkingSession | undefined {
  if (sealed.length > 16_384) return undefined
  const text = openSecret(key, CONTEXT, sealed)
  if (text === undefined) return undefined
  const session = JSON.parse(text) as DeepLinkingSession
  return session.expiresAt > now ? session : undefined
}

export interface ChosenLesson {
  slug: string
  title: string
}

/** How long the platform may take to receive the response. */
const RESPONSE_SECONDS = 300

/**
 * The response's claims (Deep Linking 2.0 section 4.2): from the tool (`iss` its client id) to the
 * platform (`aud` its issuer), `data` echoed as it came.
 */
export function deepLinkingResponseClaims(
  session: DeepLinkingSession,
  lessons: readonly ChosenLesson[],
  tool: { clientId: string; platformIssuer: string; launchUrl: string },
  now: number,
): Record<string, unknown> {
  const iat = Math.floor(now / 1000)
  return {
    iss: tool.clientId,
    aud: tool.platformIssuer,
    iat,
    exp: iat + RESPONSE_SECONDS,
    nonce: randomBytes(16).toString('base64url'),
    [CLAIM.messageType]: MESSAGE.deepLinkingResponse,
    [CLAIM.version]: LTI_VERSION,
    [CLAIM.deploymentId]: session.deploymentId,
    ...(session.data === null ? {} : { [CLAIM.deepLinkingData]: session.data }),
    [CLAIM.contentItems]: lessons.map((lesson) => ({
      type: RESOURCE_LINK_ITEM,
      title: lesson.title,
      url: tool.launchUrl,
      custom: { lesson: lesson.slug },
      lineItem: { scoreMaximum: 100, label: lesson.title, resourceId: lesson.slug },
    })),
  }
}
