/**
 * A second load generator, in two modes.
 *
 * Closed loop (the latency cross-check): keep-alive, one request in flight per connection, like
 * wrk, but Node's own HTTP client. On this machine wrk 4.1 reports multi-second p99 for the
 * ~4 KB progress responses while this client, at the same request rate against the same server,
 * does not; the run shows both so the tail can be judged. Progress reads only.
 *
 *   node bench/latency-client.mjs <baseUrl> <pairs file> <seconds> <connections>
 *
 * Open loop (--rate): requests are due on a fixed schedule, one every 1/rate s, whatever the
 * server's answers do, and each one's latency counts from the time it was due, not from when it
 * could be sent: a request that finds every connection busy (or the client late) waits, and that
 * wait is part of its latency. This is what a server sees from many independent clients, and is
 * free of coordinated omission (a closed loop sends less while the server stalls, so it never
 * measures the requests that would have waited; wrk2 works the same way). It speaks HTTP/1.1 on
 * raw sockets with requests formatted as text and responses framed by Content-Length (or
 * chunked), because Node's HTTP client costs several times more per request and would add its
 * own queueing at the rates measured here.
 *
 *   node bench/latency-client.mjs <baseUrl> <file> <seconds> <connections> --rate <req/s>
 *     [--mode progress|enroll|catalog] [--path <path for catalog>] [--etag <If-None-Match>]
 *
 * `file` holds "key student" lines (progress, enroll) or keys (catalog); keys are taken in turn
 * from a random start, as in the wrk script. Prints one line: BENCH_RESULT {requests,
 * durationUs, latencyUs: {...}, statuses, errors} (open loop adds `openLoop`: the rate, how many
 * were due, and how late requests went out).
 */
import fs from 'node:fs'
import http from 'node:http'
import net from 'node:net'
import { parseArgs } from 'node:util'

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    rate: { type: 'string' },
    mode: { type: 'string', default: 'progress' },
    path: { type: 'string' },
    etag: { type: 'string' },
  },
})
const [baseUrl, file, secondsArg, connectionsArg] = positionals
const seconds = Number(secondsArg)
const connections = Number(connectionsArg)
const lines = fs
  .readFileSync(file, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((line) => line.split(' '))
const { hostname, port } = new URL(baseUrl)
const TIERS = ['explorer', 'builder', 'innovator']
/** Open loop: requests still unanswered this long after the last one was due count as timeouts. */
const DRAIN_MS = 10_000
// Failed requests are counted under status 0, which no scenario expects.
const errors = { connect: 0, read: 0, write: 0, status: 0, timeout: 0 }

// Keys in turn from a random start, as in the wrk script: every key carries the same share.
let next = Math.floor(Math.random() * lines.length)
const statuses = {}

const result =
  values.rate === undefined ? await closedLoop() : await openLoop(Number(values.rate), requestFormatter(values.mode))
const latencies = result.latencies.sort((a, b) => a - b)
const at = (p) => Math.round(1000 * (latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? 0))
const mean = latencies.reduce((a, b) => a + b, 0) / Math.max(1, latencies.length)
console.log(
  `BENCH_RESULT ${JSON.stringify({
    requests: latencies.length,
    durationUs: Math.round(result.durationUs),
    bytes: 0,
    errors,
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
    ...(result.openLoop === undefined ? {} : { openLoop: result.openLoop }),
  })}`,
)

async function closedLoop() {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections })
  const latencies = []
  const get = (key, id) =>
    new Promise((resolve) => {
      const request = http.get(
        { hostname, port, agent, path: `/api/v1/students/${id}/progress`, headers: { authorization: `Bearer ${key}` } },
        (response) => {
          response.resume()
          response.on('end', () => resolve(response.statusCode))
        },
      )
      request.on('error', () => resolve(0))
    })
  const started = performance.now()
  const end = started + seconds * 1000
  const connection = async () => {
    while (performance.now() < end) {
      const [key, id] = lines[next]
      next = (next + 1) % lines.length
      const sent = performance.now()
      const status = await get(key, id)
      latencies.push(performance.now() - sent)
      statuses[status] = (statuses[status] ?? 0) + 1
    }
  }
  await Promise.all(Array.from({ length: connections }, connection))
  agent.destroy()
  return { latencies, durationUs: (performance.now() - started) * 1000 }
}

/** The next request of the scenario, as the text sent on the socket. */
function requestFormatter(mode) {
  const host = `Host: ${hostname}:${port}\r\n`
  const take = () => {
    const line = lines[next]
    next = (next + 1) % lines.length
    return line
  }
  if (mode === 'progress') {
    return () => {
      const [key, id] = take()
      return `GET /api/v1/students/${id}/progress HTTP/1.1\r\n${host}Authorization: Bearer ${key}\r\n\r\n`
    }
  }
  if (mode === 'enroll') {
    return () => {
      const [key, id] = take()
      const body = `{"tier":"${TIERS[Math.floor(Math.random() * 3)]}"}`
      return (
        `POST /api/v1/students/${id}/enroll HTTP/1.1\r\n${host}Authorization: Bearer ${key}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`
      )
    }
  }
  if (mode === 'catalog') {
    if (values.path === undefined) throw new Error('--mode catalog needs --path')
    const etag = values.etag === undefined ? '' : `If-None-Match: ${values.etag}\r\n`
    return () => {
      const [key] = take()
      return `GET ${values.path} HTTP/1.1\r\n${host}Authorization: Bearer ${key}\r\n${etag}\r\n`
    }
  }
  throw new Error(`unknown --mode ${mode}`)
}

function openLoop(rate, format) {
  if (!(rate > 0)) throw new Error('--rate must be a positive number of requests a second')
  const interval = 1000 / rate
  const total = Math.max(1, Math.floor(rate * seconds))
  const latencies = []
  const sendLag = []
  // Due times of requests waiting for a free connection, oldest first.
  const waiting = []
  let waitingHead = 0
  let maxWaiting = 0
  const idle = []
  let due = 0
  let answered = 0
  let start = 0
  let drain

  return new Promise((resolve) => {
    let finished = false
    const finish = () => {
      if (finished) return
      finished = true
      clearTimeout(drain)
      errors.timeout += total - answered - errors.read
      for (const connection of all) connection.socket.destroy()
      resolve({
        latencies,
        durationUs: seconds * 1e6,
        openLoop: {
          client: 'node',
          rate,
          due: total,
          maxWaiting,
          sendLagMs: {
            p50: percentile(sendLag, 0.5),
            p99: percentile(sendLag, 0.99),
            max: percentile(sendLag, 1),
          },
        },
      })
    }

    const send = (connection, dueAt) => {
      connection.dueAt = dueAt
      sendLag.push(performance.now() - dueAt)
      connection.socket.write(format(), 'latin1')
    }

    const answer = (connection, status) => {
      latencies.push(performance.now() - connection.dueAt)
      statuses[status] = (statuses[status] ?? 0) + 1
      connection.dueAt = undefined
      answered++
      if (waitingHead < waiting.length) send(connection, waiting[waitingHead++])
      else idle.push(connection)
      if (answered + errors.read === total) finish()
    }

    const open = () => {
      const connection = { socket: undefined, dueAt: undefined, buffer: null, end: -1, status: 0, chunkedFrom: 0 }
      connection.socket = net.connect({ host: hostname, port: Number(port), noDelay: true })
      connection.socket.on('data', (chunk) => receive(connection, chunk, answer))
      connection.socket.on('error', () => {})
      connection.socket.on('close', () => {
        if (finished) return
        // A request lost with its connection is an error; the connection is replaced.
        if (connection.dueAt !== undefined) {
          errors.read++
          statuses[0] = (statuses[0] ?? 0) + 1
        }
        const index = idle.indexOf(connection)
        if (index !== -1) idle.splice(index, 1)
        all[all.indexOf(connection)] = open()
        if (answered + errors.read === total) finish()
      })
      connection.socket.once('connect', () => {
        if (connection.dueAt === undefined) {
          if (waitingHead < waiting.length) send(connection, waiting[waitingHead++])
          else idle.push(connection)
        }
      })
      return connection
    }
    const all = Array.from({ length: connections }, open)

    const tick = () => {
      const now = performance.now()
      while (due < total && start + due * interval <= now) {
        const dueAt = start + due * interval
        due++
        const connection = idle.pop()
        if (connection !== undefined) send(connection, dueAt)
        else {
          waiting.push(dueAt)
          maxWaiting = Math.max(maxWaiting, waiting.length - waitingHead)
        }
      }
      if (due < total) {
        const wait = start + due * interval - performance.now()
        // Timers fire up to a millisecond late; closer than that, poll the loop instead.
        if (wait > 2) setTimeout(tick, wait - 1.5)
        else setImmediate(tick)
      } else {
        drain = setTimeout(finish, DRAIN_MS)
      }
    }
    // Give the connections a moment to open, so the first due requests find them.
    setTimeout(() => {
      start = performance.now()
      tick()
    }, 100)
  })
}

/**
 * Frames responses on a connection (one request in flight, so one response at a time):
 * headers up to the blank line, then Content-Length bytes, or chunks up to the last one, or
 * nothing (304).
 */
function receive(connection, chunk, answer) {
  connection.buffer = connection.buffer === null ? chunk : Buffer.concat([connection.buffer, chunk])
  for (;;) {
    const buffer = connection.buffer
    if (connection.end === -1) {
      const headEnd = buffer.indexOf('\r\n\r\n')
      if (headEnd === -1) return
      const head = buffer.toString('latin1', 0, headEnd)
      connection.status = Number(head.slice(9, 12))
      const length = /\r\ncontent-length:\s*(\d+)/i.exec(head)
      if (length !== null) connection.end = headEnd + 4 + Number(length[1])
      else if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) {
        connection.end = -2
        connection.chunkedFrom = headEnd + 2
      } else connection.end = headEnd + 4
    }
    if (connection.end === -2) {
      const last = buffer.indexOf('\r\n0\r\n\r\n', connection.chunkedFrom)
      if (last === -1) return
      connection.end = last + 7
    }
    if (buffer.length < connection.end) return
    connection.buffer = buffer.length > connection.end ? buffer.subarray(connection.end) : null
    connection.end = -1
    answer(connection, connection.status)
    if (connection.buffer === null) return
  }
}

function percentile(values, p) {
  if (values.length === 0) return 0
  const sorted = [...values].sort((a, b) => a - b)
  return Math.round(1000 * sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]) / 1000
}
