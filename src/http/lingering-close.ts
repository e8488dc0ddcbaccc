/**
 * A refused request body must not cost the client its answer. When the service answers before
 * reading the whole body (413 for a body over the limit, or any refusal before the body is
 * read) it closes the connection, since the rest of the body cannot be told from a next
 * request. Closing a socket that still receives data makes the kernel answer with a reset, and
 * a client still writing its body then fails with EPIPE or ECONNRESET before it reads the 413
 * (Node's fetch did, for bodies sent chunked or larger than the socket buffers).
 *
 * So the close lingers, as Apache's and nginx's `lingering_close` do: the answer goes out, the
 * write side is shut (FIN), and what the client still sends is read and dropped until it closes
 * its side, goes quiet for `idleMs`, or `totalMs` or `maxBytes` is reached; then the socket is
 * destroyed.
 *
 * And `Expect: 100-continue` is honoured: a body announced larger than the limit is refused
 * without the "100 Continue" that would invite the client to send it.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'

export interface LingerOptions {
  /** How long to keep reading after the answer, at most. */
  readonly totalMs: number
  /** How long the client may stay silent before the socket is destroyed. */
  readonly idleMs: number
  /** How many bytes to read and drop, at most. */
  readonly maxBytes: number
}

export const LINGER: LingerOptions = Object.freeze({ totalMs: 10_000, idleMs: 2_000, maxBytes: 64 * 1024 * 1024 })

const LINGERS = Symbol('lingers')

/**
 * Makes the server's own close of this socket (after an answer sent with `Connection: close`)
 * a lingering one. Node's HTTP server closes such a connection with `socket.destroySoon()`.
 */
export function lingerOnClose(socket: Socket, options: LingerOptions = LINGER): void {
  const marked = socket as Socket & { [LINGERS]?: true; destroySoon?: () => void }
  if (marked[LINGERS] === true || typeof marked.destroySoon !== 'function') return
  marked[LINGERS] = true
  marked.destroySoon = () => {
    if (socket.destroyed) return
    let received = 0
    const close = () => {
      clearTimeout(total)
      clearTimeout(idle)
      socket.destroy()
    }
    const total = setTimeout(close, options.totalMs)
    let idle = setTimeout(close, options.idleMs)
    total.unref()
    idle.unref()
    socket.on('data', (chunk: Buffer) => {
      received += chunk.length
      if (received > options.maxBytes) return close()
      clearTimeout(idle)
      idle = setTimeout(close, options.idleMs)
      idle.unref()
    })
    socket.once('end', close)
    socket.once('close', close)
    socket.end()
    socket.resume()
  }
}

/** Whether the request carries a body (RFC 9112 6.3). */
function hasBody(request: IncomingMessage): boolean {
  const length = request.headers['content-length']
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0')
}

/**
 * Wires both into a server: `handle` is the request handler (Fastify's, behind the fast path).
 */
export function protectRefusedBodies(
  server: Server,
  bodyLimit: number,
  handle: (request: IncomingMessage, response: ServerResponse) => void,
): void {
  server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) => {
    // Over the limit: answer 413 at once; the client never sends the body.
    // A chunked body (no length) is invited too: only a length over the limit is known in advance.
    if (!(Number(request.headers['content-length']) > bodyLimit)) response.writeContinue()
    lingerOnClose(request.socket)
    handle(request, response)
  })
  server.prependListener('request', (request: IncomingMessage) => {
    if (hasBody(request)) lingerOnClose(request.socket)
  })
}
