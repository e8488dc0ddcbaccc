/**
 * Rate-limit response fields, in two dialects:
 * - the IETF httpapi draft-10 structured fields, one list member per policy:
 *   `RateLimit-Policy: "default";q=100;w=60, "organisation";q=300;w=60` and
 *   `RateLimit: "default";r=42;t=17, "organisation";r=250;t=17`. "default" is the key's own
 *   limit, "organisation" all of its organisation's keys together;
 * - the de-facto `X-RateLimit-Limit`, `-Remaining` and `-Reset` (Unix seconds), which most
 *   client libraries read. They describe one limit, so they describe the tighter one: the
 *   policy with the fewest requests left.
 * r is what is left now; t (and X-RateLimit-Reset) is when r next grows, i.e. when the oldest
 * request in the window leaves it: with r = 0, when one more request would be accepted.
 * Times round up, so a client that waits as told is never early.
 *
 * The fast path and the router both take their header values from `rateLimitHeaders`.
 */
import type { RateDecision } from '../domain/sliding-window.js'

export const POLICY_NAME = 'default'
export const ORGANISATION_POLICY_NAME = 'organisation'

/** What a request's limits said: its key's, and its organisation's when that was consulted. */
export interface RateState {
  readonly key: RateDecision
  readonly organisation?: RateDecision
}

export function policyHeader(limit: number, windowSeconds: number, organisationLimit?: number): string {
  const own = `"${POLICY_NAME}";q=${limit};w=${windowSeconds}`
  return organisationLimit === undefined
    ? own
    : `${own}, "${ORGANISATION_POLICY_NAME}";q=${organisationLimit};w=${windowSeconds}`
}

function member(name: string, decision: RateDecision): string {
  return `"${name}";r=${decision.remaining};t=${Math.ceil(decision.resetMs / 1000)}`
}

/** The `RateLimit` field. */
export function rateLimitField(state: RateState): string {
  const own = member(POLICY_NAME, state.key)
  return state.organisation === undefined ? own : `${own}, ${member(ORGANISATION_POLICY_NAME, state.organisation)}`
}

/** `X-RateLimit-Reset`: the same instant as `t`, in Unix seconds. */
export function rateLimitReset(decision: RateDecision, now: number): string {
  return String(Math.ceil((now + decision.resetMs) / 1000))
}

/** The policy a single-limit client should be told about: the one with the fewest left. */
export function bindingDecision(state: RateState): RateDecision {
  const { key, organisation } = state
  if (organisation === undefined) return key
  if (organisation.remaining !== key.remaining) return organisation.remaining < key.remaining ? organisation : key
  return organisation.resetMs > key.resetMs ? organisation : key
}

/**
 * Every rate-limit header of an answer to an identified key, by lower-case name, added to
 * `into` (a new object by default; the fast path passes the answer's other headers).
 */
export function rateLimitHeaders(
  state: RateState,
  policy: string,
  now: number,
  into: Record<string, string> = {},
): Record<string, string> {
  const binding = bindingDecision(state)
  into['ratelimit-policy'] = policy
  into.ratelimit = rateLimitField(state)
  into['x-ratelimit-limit'] = String(binding.limit)
  into['x-ratelimit-remaining'] = String(binding.remaining)
  into['x-ratelimit-reset'] = rateLimitReset(binding, now)
  return into
}
