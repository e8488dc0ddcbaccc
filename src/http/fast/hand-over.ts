/**
 * The one thing the fast path leaves for the router on a request it does not answer after all:
 * the admission verdict it took, so that the request is counted against the limits once, and,
 * for an enroll, the body it had read from the socket. The router's authentication takes the
 * verdict (`takeVerdict`, which app.ts hands to it) and the enroll route's `preParsing` hook
 * (`replayBody`, which index.ts adds to that route) the body, each once.
 *
 * Kept in a WeakMap rather than on the request object: nothing else can see or set it, and it
 * goes with the request.
 */
import type { IncomingMessage } from 'node:http'
import { Readable } from 'node:stream'
import type { FastifyReply, FastifyRequest, RequestPayload } from 'fastify'
import type { Verdict } from '../admission.js'

export interface HandOver {
  readonly verdict: Verdict
  /** The body read by the fast path; the router parses it as if it came from the socket. */
  readonly body?: Buffer
}

const handedOver = new WeakMap<IncomingMessage, { verdict?: Verdict; body?: Buffer }>()

/** Leaves `handOver` on the request for the router. */
export function handOver(request: IncomingMessage, handOver: HandOver): void {
  handedOver.set(request, { verdict: handOver.verdict, body: handOver.body })
}

/** The verdict the fast path took for this request, once. */
export function takeVerdict(request: IncomingMessage): Verdict | undefined {
  const left = handedOver.get(request)
  if (left === undefined) return undefined
  const verdict = left.verdict
  left.verdict = undefined
  return verdict
}

/**
 * The enroll route's `preParsing` hook: the body the fast path read, as the stream the router
 * parses; the request's own stream otherwise.
 */
export function replayBody(
  request: FastifyRequest,
  _reply: FastifyReply,
  payload: RequestPayload,
  done: (error: null, payload: RequestPayload) => void,
): void {
  const left = handedOver.get(request.raw)
  if (left?.body === undefined) {
    done(null, payload)
    return
  }
  const body = left.body
  left.body = undefined
  done(null, Readable.from([body], { objectMode: false }))
}
