/**
 * A second load generator for the latency cross-check: closed loop, keep-alive, one request in
 * flight per connection, like wrk, but Node's own HTTP client. On this machine wrk 4.1 reports
 * multi-second p99 for the ~4 KB progress responses while this client, at the same request rate
 * against the same server, does not; the run shows both so the tail can be judged.
 *
 *   node bench/latency-client.mjs <baseUrl> <pairs file> <seconds> <connections>
 *
 * Prints one line: BENCH_RESULT {requests, durationUs, latencyUs: {...}, statuses}.
 */
import fs from 'node:fs'
import http from 'node:http'

const [baseUrl, pairsFile, secondsArg, connectionsArg] = process.argv.slice(2)
const seconds = Number(secondsArg)
const connections = Number(connectionsArg)
const pairs = fs
  .readFileSync(pairsFile, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((line) => line.split(' '))
const { hostname, port } = new URL(baseUrl)
const agent = new http.Agent({ keepAlive: true, maxSockets: connections })

// Keys in turn from a random start, as in the wrk script: every key carries the same share.
let next = Math.floor(Math.random() * pairs.length)
const latencies = []
const statuses = {}

function get(key, id) {
  return new Promise((resolve) => {
    const request = http.get(
      { hostname, port, agent, path: `/api/v1/students/${id}/progress`, headers: { authorization: `Bearer ${key}` } },
      (response) => {
        response.resume()
        response.on('end', () => resolve(response.statusCode))
      },
    )
    request.on('error', () => resolve(0))
  })
}

const started = performance.now()
const end = started + seconds * 1000
async function connection() {
  while (performance.now() < end) {
    const [key, id] = pairs[next]
    next = (next + 1) % pairs.length
    const sent = performance.now()
    const status = await get(key, id)
    latencies.push(performance.now() - sent)
    statuses[status] = (statuses[status] ?? 0) + 1
  }
}
await Promise.all(Array.from({ length: connections }, connection))
const durationUs = (performance.now() - started) * 1000
agent.destroy()

latencies.sort((a, b) => a - b)
const at = (p) => Math.round(1000 * (latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? 0))
const mean = latencies.reduce((a, b) => a + b, 0) / Math.max(1, latencies.length)
console.log(
  `BENCH_RESULT ${JSON.stringify({
    requests: latencies.length,
    durationUs: Math.round(durationUs),
    bytes: 0,
    // Failed requests are counted under status 0, which no scenario expects.
    errors: { connect: 0, read: 0, write: 0, status: 0, timeout: 0 },
    latencyUs: {
      min: at(0),
      mean: mean * 1000,
      max: at(1),
      p50: at(0.5),
      p90: at(0.9),
      p99: at(0.99),
      p999: at(0.999),
    },
    statuses,
  })}`,
)
