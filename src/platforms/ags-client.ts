/**
 * The two requests that put a score into a platform's gradebook (Assignment and Grade Services
 * 2.0): an access token by the client-credentials grant with our client assertion (LTI Security
 * Framework 1.0, 4.1), then the score posted to the line item's scores endpoint with it. Both go
 * through platform-fetch.ts, under the webhooks' SSRF rules.
 */
import type { ToolKey } from '../domain/lti-tool-key.js'
import { SCORE_MEDIA_TYPE } from '../domain/lti-claims.js'
import { MAX_ANSWER_KEPT, scoresUrl } from '../domain/lti-score.js'
import { CLIENT_ASSERTION_TYPE, clientAssertion } from './client-assertion.js'
import { type PlatformRequest, platformFetch } from './platform-fetch.js'

/** The most of an answer read: tokens and score answers are small. */
const MAX_ANSWER_BYTES = 65_536

/** How requests to platforms are made: the deadline, loopback for tests, name resolution, stopping. */
export type PlatformSettings = Pick<PlatformRequest, 'timeoutMs' | 'allowLoopback' | 'resolve' | 'stopping'>

/** What the token request needs of a registration. */
export interface TokenEndpoint {
  tokenUrl: string
  /** The `aud` the platform asks of assertions, when it is not the token URL. */
  tokenAudience: string | null
  clientId: string
  /** Space-separated scopes asked for. */
  scope: string
}

/** An HTTP answer, or none, as a score attempt keeps it. */
export interface PlatformReply {
  status: number | null
  error: string | null
  /** The start of the body, at most MAX_ANSWER_KEPT characters. */
  response: string
}

export type TokenAnswer = { ok: true; token: string; expiresInS: number | undefined } | ({ ok: false } & PlatformReply)

function reply(answer: Awaited<ReturnType<typeof platformFetch>>): PlatformReply {
  return answer.ok
    ? { status: answer.status, error: null, response: answer.body.slice(0, MAX_ANSWER_KEPT) }
    : { status: null, error: answer.error, response: '' }
}

/** An access token for `endpoint.scope`, by the client-credentials grant with an assertion signed by `key`. */
export async function requestAccessToken(
  endpoint: TokenEndpoint,
  key: ToolKey,
  now: number,
  settings: PlatformSettings,
): Promise<TokenAnswer> {
  const assertion = await clientAssertion(key, {
    clientId: endpoint.clientId,
    audience: endpoint.tokenAudience ?? endpoint.tokenUrl,
    now,
  })
  const answer = await platformFetch(endpoint.tokenUrl, {
    ...settings,
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_assertion_type: CLIENT_ASSERTION_TYPE,
      client_assertion: assertion,
      scope: endpoint.scope,
    }).toString(),
    maxBytes: MAX_ANSWER_BYTES,
  })
  const kept = reply(answer)
  if (!answer.ok || answer.status < 200 || answer.status >= 300)
    return { ok: false, ...kept, error: kept.error ?? `the token endpoint answered ${kept.status}` }
  let json: unknown
  try {
    json = JSON.parse(answer.body)
  } catch {
    return { ok: false, ...kept, error: 'the token endpoint answered something other than JSON' }
  }
  const { access_token: token, token_type: type, expires_in: expires } = (json ?? {}) as Record<string, unknown>
  // RFC 6749, 5.1: a bearer token is what the score endpoint takes (its type is case-insensitive).
  if (typeof token !== 'string' || token === '' || typeof type !== 'string' || type.toLowerCase() !== 'bearer')
    return { ok: false, ...kept, error: 'the token endpoint gave no bearer access token' }
  return { ok: true, token, expiresInS: typeof expires === 'number' && expires > 0 ? expires : undefined }
}

/** Posts a score (its JSON, as queued) to the line item's scores endpoint. */
export async function postScore(
  lineItemUrl: string,
  token: string,
  score: string,
  settings: PlatformSettings,
): Promise<PlatformReply> {
  const answer = await platformFetch(scoresUrl(lineItemUrl), {
    ...settings,
    method: 'POST',
    headers: { 'content-type': SCORE_MEDIA_TYPE, authorization: `Bearer ${token}`, accept: 'application/json' },
    body: score,
    maxBytes: MAX_ANSWER_BYTES,
  })
  return reply(answer)
}
