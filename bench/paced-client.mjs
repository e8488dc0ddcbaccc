/**
 * A paced load generator that keeps every request's timing: `connections` keep-alive
 * connections, each sending progress reads at a fixed pace (together `rate` requests a second;
 * a connection whose answer comes late sends its next request at once). Unlike a closed loop at
 * saturation, the latency it sees is the service's own plus whatever the service was blocked
 * on, which is what the usage-flush measurement needs.
 *
 *   node bench/paced-client.mjs <baseUrl> <pairs file> <seconds> <connections> <rate>
 *
 * Prints one line: BENCH_RESULT {requests: [[sentAt epoch ms, latency ms, status], ...]}.
 */
import fs from 'node:fs'
import http from 'node:http'

const [baseUrl, pairsFile, secondsArg, connectionsArg, rateArg] = process.argv.slice(2)
const seconds = Number(secondsArg)
const connections = Number(connectionsArg)
const interval = (1000 * connections) / Number(rateArg)
const pairs = fs
  .readFileSync(pairsFile, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((line) => line.split(' '))
const { hostname, port } = new URL(baseUrl)
const agent = new http.Agent({ keepAlive: true, maxSockets: connections })
let next = Math.floor(Math.random() * pairs.length)
const requests = []

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

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const started = performance.now()
const end = started + seconds * 1000

async function connection(offset) {
  let due = started + offset
  while (due < end) {
    const wait = due - performance.now()
    if (wait > 0) await sleep(wait)
    const [key, id] = pairs[next]
    next = (next + 1) % pairs.length
    const sent = performance.now()
    const status = await get(key, id)
    requests.push([performance.timeOrigin + sent, performance.now() - sent, status])
    due = Math.max(due + interval, performance.now())
  }
}
await Promise.all(Array.from({ length: connections }, (_, i) => connection((i * interval) / connections)))
agent.destroy()
console.log(`BENCH_RESULT ${JSON.stringify({ requests })}`)
