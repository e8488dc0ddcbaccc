/**
 * A problem+json body as the bytes the fast path sends: the same body as the router's
 * (problem-responses.ts), with each reused problem's bytes up to its request id made once.
 */
import type { Problem } from '../../errors.js'
import { type ByteString, byteString } from '../byte-string.js'
import { problemJson, problemPrefix } from '../problem-responses.js'

const prefixBytes = new WeakMap<Problem, ByteString>()

export function problemBytes(problem: Problem, requestId: string): ByteString {
  if (problem.errors !== undefined || problem.extensions !== undefined)
    return byteString(problemJson(problem, requestId))
  let prefix = prefixBytes.get(problem)
  if (prefix === undefined) {
    prefix = byteString(problemPrefix(problem))
    prefixBytes.set(problem, prefix)
  }
  // Only the id is converted (a no-op for the ids made here): the prefix is bytes already.
  return `${prefix}${byteString(JSON.stringify(requestId))}}` as ByteString
}
