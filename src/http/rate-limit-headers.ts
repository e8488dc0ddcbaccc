/**
 * Rate-limit response fields, in two dialects:
 * - the IETF httpapi draft-10 structured fields, `RateLimit-Policy: "default";q=100;w=60` and
 *   `RateLimit: "default";r=42;t=17`;
 * - the de-facto `X-RateLimit-Limit`, `-Remaining` and `-Reset` (Unix seconds), which most
 *   client libraries read.
 * r is what is left now; t (and X-RateLimit-Reset) is when r next grows, i.e. when the oldest
 * request in the window leaves it: with r = 0, when one more request would be accepted.
 * Times round up, so a client that waits as told is never early.
 */
import type { FastifyReply } from 'fastify'
import type { RateDecision } from '../domain/sliding-window.js'

export const POLICY_NAME = 'default'

export function policyHeader(limit: number, windowSeconds: number): string {
  return `"${POLICY_NAME}";q=${limit};w=${windowSeconds}`
}

/** The `RateLimit` field. */
export function rateLimitField(decision: RateDecision): string {
  return `"${POLICY_NAME}";r=${decision.remaining};t=${Math.ceil(decision.resetMs / 1000)}`
}

/** `X-RateLimit-Reset`: the same instant as `t`, in Unix seconds. */
export function rateLimitReset(decision: RateDecision, now: number): string {
  return String(Math.ceil((now + decision.resetMs) / 1000))
}

export function setRateLimitHeaders(reply: FastifyReply, decision: RateDecision, policy: string, now: number): void {
  reply.header('ratelimit-policy', policy)
  reply.header('ratelimit', rateLimitField(decision))
  reply.header('x-ratelimit-limit', String(decision.limit))
  reply.header('x-ratelimit-remaining', String(decision.remaining))
  reply.header('x-ratelimit-reset', rateLimitReset(decision, now))
}
