/**
 * What a client can hold open, bounded: the time to send the headers and the whole request
 * (slowloris: a body trickled a byte at a time would otherwise hold an enroll or sign-in
 * connection open for as long as the client likes), the idle time of a kept-alive connection,
 * and the connections one address may have open at once. Answers Node gives at the socket level
 * (408 on a timeout, 400 on a request it cannot parse, 431 on headers too large) are written as
 * problem+json like every other error.
 */
import type { Server } from 'node:http'
import { randomUUID } from 'node:crypto'
import type { Socket } from 'node:net'
import type { FastifyBaseLogger } from 'fastify'
import { PROBLEM_CATALOG, type ProblemCode, problemType } from '../errors.js'

export interface ConnectionLimits {
  /** Time from the connection's first byte to the end of the request headers. */
  readonly headersTimeoutMs: number
  /** Time to receive a whole request, headers and body. */
  readonly requestTimeoutMs: number
  /** How long a kept-alive connection may sit idle between requests. */
  readonly keepAliveTimeoutMs: number
  /** Connections one client address may hold open at once; 0 for no limit. */
  readonly maxConnectionsPerAddress: number
}

/**
 * How often Node looks for requests past their time (http.createServer's
 * `connectionsCheckingInterval`, 30 s by default, which would let a slow body run 30 s late).
 */
export function checkingIntervalMs(limits: ConnectionLimits): number {
  return Math.max(100, Math.min(1000, Math.floor(limits.headersTimeoutMs / 4)))
}

/** Sets the server's timeouts. */
export function applyTimeouts(server: Server, limits: ConnectionLimits): void {
  server.headersTimeout = limits.headersTimeoutMs
  server.requestTimeout = limits.requestTimeoutMs
  server.keepAliveTimeout = limits.keepAliveTimeoutMs
}

/**
 * Refuses a connection past the per-address limit by closing it at once: it costs no parser and
 * no request. Only where the socket's address is the client's (not behind a proxy, whose one
 * address carries everybody).
 */
export function limitConnectionsPerAddress(server: Server, limit: number, log: () => FastifyBaseLogger): void {
  if (limit <= 0) return
  const open = new Map<string, number>()
  let warned = 0
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? ''
    const count = (open.get(address) ?? 0) + 1
    if (count > limit) {
      // One line a minute at most: a flood must not become a flood of log lines.
      if (Date.now() - warned > 60_000) {
        warned = Date.now()
        log().warn({ address, limit }, 'connection refused: too many open connections from one address')
      }
      socket.destroy()
      return
    }
    open.set(address, count)
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1
      if (left === 0) open.delete(address)
      else open.set(address, left)
    })
  })
}

const SOCKET_ERRORS: Record<string, { code: ProblemCode; detail: string }> = {
  ERR_HTTP_REQUEST_TIMEOUT: {
    code: 'request_timeout',
    detail: 'The request was not received in time; send the headers and body without pausing.',
  },
  HPE_HEADER_OVERFLOW: { code: 'request_header_fields_too_large', detail: 'The request headers are too large.' },
}

/**
 * Fastify's `clientErrorHandler`: called with the socket when Node refuses a request before
 * any route runs. Writes a problem+json answer if the socket can still take one, then closes.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  const known = SOCKET_ERRORS[error.code ?? ''] ?? {
    code: 'invalid_request' as const,
    detail: 'The request is not valid HTTP/1.1.',
  }
  const { status, title } = PROBLEM_CATALOG[known.code]
  // Every problem carries a request id, as the contract's Problem schema says, this one too.
  const requestId = randomUUID()
  const body = JSON.stringify({
    type: problemType(known.code),
    title,
    status,
    detail: known.detail,
    code: known.code,
    requestId,
  })
  if (socket.writable) {
    const head = [
      `HTTP/1.1 ${status} ${title}`,
      'Content-Type: application/problem+json; charset=utf-8',
      `X-Request-Id: ${requestId}`,
      `Content-Length: ${Buffer.byteLength(body)}`,
      'Connection: close',
    ]
    socket.write(`${head.join('\r\n')}\r\n\r\n${body}`)
  }
  socket.destroy()
}
