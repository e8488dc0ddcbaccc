/**
 * The ceiling: the fastest a Node process can answer on this machine. A bare node:http server
 * that answers every request with the same precomputed bytes (the service's own /api/v1/tiers
 * body and content type, fetched once), with no routing, auth, rate limit or logging. Run on the
 * same core as the service and measured with the same wrk settings, it is what every scenario's
 * req/s is divided by.
 *
 * Environment: PORT, CEILING_RESPONSE (a JSON file {"contentType", "etag", "body"}), and
 * CEILING_SPIN_US: CPU time to burn per request (default 0). With about the CPU a progress read
 * costs, it shows which latency tail comes from Node serving 64 busy connections at all.
 * CEILING_HEADERS=service: send every header the service's 200 carries (a fresh request id,
 * CORS, the five rate-limit fields), as fixed values: what the contract's headers alone cost.
 */
import { randomUUID } from 'node:crypto'
import fs from 'node:fs'
import http from 'node:http'

const response = JSON.parse(fs.readFileSync(process.env.CEILING_RESPONSE, 'utf8'))
const body = Buffer.from(response.body, 'utf8')
const headers = {
  'content-type': response.contentType,
  'content-length': String(body.length),
  etag: response.etag,
  'cache-control': 'private, no-cache',
}

const spinMs = Number(process.env.CEILING_SPIN_US ?? 0) / 1000
const serviceHeaders = process.env.CEILING_HEADERS === 'service'
const EXPOSED =
  'RateLimit, RateLimit-Policy, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, ETag, X-Request-Id, WWW-Authenticate, Allow'

const server = http.createServer((_request, reply) => {
  if (spinMs > 0) {
    const until = performance.now() + spinMs
    while (performance.now() < until);
  }
  if (serviceHeaders) {
    reply.writeHead(200, {
      'x-request-id': randomUUID(),
      'access-control-allow-origin': '*',
      'access-control-expose-headers': EXPOSED,
      'ratelimit-policy': '"default";q=100;w=60',
      ratelimit: '"default";r=99;t=60',
      'x-ratelimit-limit': '100',
      'x-ratelimit-remaining': '99',
      'x-ratelimit-reset': String(Math.ceil(Date.now() / 1000) + 60),
      ...headers,
    })
  } else {
    reply.writeHead(200, headers)
  }
  reply.end(body)
})
server.keepAliveTimeout = 65_000
server.listen(Number(process.env.PORT), '127.0.0.1')
// Nothing to finish: the bench stops it only after wrk has.
process.on('SIGTERM', () => process.exit(0))
process.on('SIGINT', () => process.exit(0))
