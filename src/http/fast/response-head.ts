/**
 * The fast path's answers, written as one string instead of through `writeHead` and `end(body)`.
 *
 * `writeHead(status, headers)` checks every name against the token grammar and every value
 * against the field-value grammar (two regular expressions a field, RFC 9110 5.1 and 5.5), then
 * builds the head field by field. The fast path's answers carry a dozen fields, and those checks
 * and Node's bookkeeping around them were a tenth of a catalog request. Here they cannot fail:
 * every name is a constant of this service and every value is built from numbers, ids, ETags
 * and constants, never from a request. So the head is joined as Node joins it and left where
 * Node's `end()` looks for a head already stored (`_header`, unsent), and the rest of the
 * answer (the finish, keep-alive) goes through Node unchanged. `send` puts the body in the same
 * string, which `end()` then writes in one call (see there).
 *
 * The bytes are Node's own, Date and Keep-Alive included (test/http/response-head.test.ts
 * compares them with writeHead's on a socket, for each status and server setting). Only the
 * common case is written here: an HTTP/1.1 exchange that stays open, with no field set on the
 * response before and no `Expect: 100-continue`. Anything else, and a Node whose responses
 * lack the fields this relies on (checked once, at load), goes through `writeHead`.
 */
import { type IncomingMessage, STATUS_CODES, ServerResponse } from 'node:http'
import type { ByteString } from '../byte-string.js'

/** The fields of Node's ServerResponse this writes or reads. Not public API: see `supported`. */
interface NodeResponse {
  _header: string | null
  _headerSent: boolean
  _hasBody: boolean
  _removedConnection: boolean
  _expect_continue: boolean
  _defaultKeepAlive: boolean
  _keepAliveTimeout: number
  _maxRequestsPerSocket: number
  maxRequestsOnConnectionReached: boolean
  shouldKeepAlive: boolean
  useChunkedEncodingByDefault: boolean
  chunkedEncoding: boolean
  sendDate: boolean
}

/** The symbol under which Node keeps fields set with setHeader, found on a fresh response. */
function outHeadersSymbol(response: object): symbol | undefined {
  return Object.getOwnPropertySymbols(response).find((symbol) => symbol.description === 'kOutHeaders')
}

const probe = new ServerResponse({
  method: 'GET',
  httpVersionMajor: 1,
  httpVersionMinor: 1,
  headers: {},
} as IncomingMessage) as unknown as NodeResponse & Record<symbol, unknown>
const OUT_HEADERS = outHeadersSymbol(probe)

/** Whether this Node's responses start as the code below expects (checked once). */
const supported =
  OUT_HEADERS !== undefined &&
  probe[OUT_HEADERS] === null &&
  probe._header === null &&
  probe._headerSent === false &&
  probe._hasBody === true &&
  probe._removedConnection === false &&
  probe._defaultKeepAlive === true &&
  probe.shouldKeepAlive === true &&
  probe.useChunkedEncodingByDefault === true &&
  probe.chunkedEncoding === false &&
  probe.sendDate === true &&
  typeof (probe as unknown as { _storeHeader?: unknown })._storeHeader === 'function'

const STATUS_LINES = new Map<number, string>()
function statusLine(status: number): string {
  let line = STATUS_LINES.get(status)
  if (line === undefined) {
    line = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'unknown'}\r\n`
    STATUS_LINES.set(status, line)
  }
  return line
}

/** `Date: <IMF-fixdate>\r\n` for the current second, made once a second (Node caches it too). */
let dateLine = ''
let dateUntil = 0
function currentDateLine(): string {
  const now = Date.now()
  if (now >= dateUntil) {
    dateLine = `Date: ${new Date(now).toUTCString()}\r\n`
    dateUntil = now - (now % 1000) + 1000
  }
  return dateLine
}

/** The connection fields Node adds to a response that keeps the connection open. */
let keepAliveLines = ''
let keepAliveFor = Number.NaN
let keepAliveMax = Number.NaN
function keepAlive(timeoutMs: number, maxRequests: number): string {
  if (timeoutMs !== keepAliveFor || maxRequests !== keepAliveMax) {
    keepAliveFor = timeoutMs
    keepAliveMax = maxRequests
    const max = ~~maxRequests > 0 ? `, max=${maxRequests}` : ''
    keepAliveLines = timeoutMs
      ? `Connection: keep-alive\r\nKeep-Alive: timeout=${Math.floor(timeoutMs / 1000)}${max}\r\n`
      : 'Connection: keep-alive\r\n'
  }
  return keepAliveLines
}

/**
 * Stores the head Node would write for this answer, followed by `body`, where `end()` sends a
 * stored head, and sets the status as `writeHead` would; or returns false, having touched
 * nothing, when this is not the common case described in the module comment.
 */
function store(response: ServerResponse, status: number, headers: Record<string, string>, body: ByteString): boolean {
  const node = response as unknown as NodeResponse & Record<symbol, unknown>
  if (
    !supported ||
    node._header !== null ||
    node[OUT_HEADERS!] !== null ||
    !node.shouldKeepAlive ||
    node.maxRequestsOnConnectionReached ||
    node._expect_continue ||
    !node._defaultKeepAlive ||
    node._removedConnection ||
    !node.sendDate ||
    !node.useChunkedEncodingByDefault ||
    // Without a length Node would send the body chunked; only a 204 or 304 has none.
    (headers['content-length'] === undefined && status !== 204 && status !== 304)
  )
    return false
  let head = statusLine(status)
  for (const name in headers) head += `${name}: ${headers[name]}\r\n`
  response.statusCode = status
  response.statusMessage = STATUS_CODES[status] ?? 'unknown'
  // As writeHead: these answers end with their head (RFC 9110 15.3.5, 15.4.5).
  if (status === 204 || status === 304) node._hasBody = false
  const connection = keepAlive(node._keepAliveTimeout, node._maxRequestsPerSocket)
  node._header = `${head}${currentDateLine()}${connection}\r\n${body}`
  node._headerSent = false
  return true
}

/** The body of an answer that has none (a 304). */
export const NO_BODY = '' as ByteString

/**
 * Sends a whole answer, head and body, as one string in one write: `end()` with no chunk sends
 * a stored head alone, without the cork, the second (empty) chunk and the vectored write that
 * `end(body)` costs on Node 20 and 22. The body goes in as bytes (latin1), so any UTF-8 arrives
 * intact. `headers` are lower-case names of this service's own (none of `date`, `connection`,
 * `transfer-encoding`, `trailer` or `expect`, which Node treats apart), with values that need
 * no check (see the module comment); the answer's `writeHead(status, headers)`, as it were.
 */
export function send(
  response: ServerResponse,
  status: number,
  headers: Record<string, string>,
  body: ByteString,
): void {
  if (store(response, status, headers, body)) {
    response.end()
    return
  }
  response.writeHead(status, headers)
  response.end(body, 'latin1')
}
