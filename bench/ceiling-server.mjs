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
 */
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

const server = http.createServer((request, reply) => {
  if (spinMs > 0) {
    const until = performance.now() + spinMs
    while (performance.now() < until);
  }
  reply.writeHead(200, headers)
  reply.end(body)
})
server.keepAliveTimeout = 65_000
server.listen(Number(process.env.PORT), '127.0.0.1')
// Nothing to finish: the bench stops it only after wrk has.
process.on('SIGTERM', () => process.exit(0))
process.on('SIGINT', () => process.exit(0))
