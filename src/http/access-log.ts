/**
 * The access log: one line per response, the same from the router and the fast path (a test
 * compares them line by line). The router's request logger adds `reqId` itself; the fast path,
 * which has no request logger, passes it.
 */
import type { FastifyBaseLogger } from 'fastify'

export interface AccessLogFields {
  reqId?: string
  method: string
  /** The request target without its query (the query may carry anything a client typed). */
  path: string
  status: number
  ms: number
  keyId: string | undefined
}

/** Writes the line for a response that took `elapsedMs`. */
export function logAccess(
  log: FastifyBaseLogger,
  fields: Omit<AccessLogFields, 'path' | 'ms'> & { url: string; elapsedMs: number },
): void {
  const { url, elapsedMs, ...rest } = fields
  const line: AccessLogFields = { ...rest, path: url.split('?')[0] ?? '', ms: Math.round(elapsedMs * 10) / 10 }
  log.info(line, 'request')
}
