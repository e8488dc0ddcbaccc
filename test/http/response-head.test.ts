/**
 * The fast path's heads (src/http/fast/response-head.ts) are byte for byte what Node's writeHead
 * writes, on a real socket: for each status the fast path sends, with each keep-alive setting
 * of the server, and for every exchange the module leaves to writeHead (a connection that
 * closes, an HTTP/1.0 client, a field set before, the last request a socket may carry). Each
 * case also checks which of the two wrote the head, so that a module that always fell back to
 * writeHead (and so trivially wrote the same bytes) fails.
 */
import http from 'node:http'
import net from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import type { Problem } from '../../src/errors.js'
import { problemBytes, problemJson } from '../../src/http/problem-responses.js'
import { byteString } from '../../src/http/byte-string.js'
import { send } from '../../src/http/fast/response-head.js'

const BODY = '{"data":[{"id":"explorer"}]}'
const UTF8_BODY = '{"firstName":"Zoë","note":"– ✓ 😀"}'

/** The answers the fast path gives, by request path. */
const ANSWERS: Record<string, { status: number; headers: Record<string, string>; body?: string }> = {
  '/ok': {
    status: 200,
    headers: {
      'x-request-id': '5f0c8a52-3c1e-4d7a-9a53-0e2f1b6c7d88',
      'access-control-allow-origin': '*',
      'access-control-expose-headers': 'RateLimit, RateLimit-Policy, ETag, X-Request-Id',
      'ratelimit-policy': '"default";q=100;w=60, "organisation";q=300;w=60',
      ratelimit: '"default";r=99;t=60, "organisation";r=299;t=60',
      'x-ratelimit-limit': '100',
      'x-ratelimit-remaining': '99',
      'x-ratelimit-reset': '1795000000',
      etag: '"3f2a"',
      'cache-control': 'private, no-cache',
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(Buffer.byteLength(BODY)),
    },
    body: BODY,
  },
  '/not-modified': {
    status: 304,
    headers: { 'x-request-id': 'a', etag: '"3f2a"', 'cache-control': 'private, no-cache' },
  },
  '/unauthorized': {
    status: 401,
    headers: {
      'x-request-id': 'b',
      'www-authenticate': 'Bearer realm="curriculum", error="invalid_token"',
      'content-type': 'application/problem+json; charset=utf-8',
      'content-length': '2',
    },
    body: '{}',
  },
  '/utf8': {
    status: 200,
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(Buffer.byteLength(UTF8_BODY)),
    },
    body: UTF8_BODY,
  },
  '/limited': {
    status: 429,
    headers: { 'retry-after': '17', 'content-type': 'application/problem+json; charset=utf-8', 'content-length': '2' },
    body: '{}',
  },
}

/** Node's writeHead and end(body); the module's send. */
type Writer = 'node' | 'send'
let server: http.Server | undefined

/**
 * A server answering every known path with its answer, its head written by `writer`; records
 * whether Node's writeHead was called for each response.
 */
async function serve(writer: Writer, settings: { keepAliveTimeout?: number; maxRequestsPerSocket?: number } = {}) {
  const calledWriteHead: boolean[] = []
  server = http.createServer((request, response) => {
    const answer = ANSWERS[request.url!.split('?')[0]!]!
    let called = false
    const original = response.writeHead.bind(response) as (...args: unknown[]) => http.ServerResponse
    response.writeHead = ((...args: unknown[]) => {
      called = true
      return original(...args)
    }) as typeof response.writeHead
    if (request.url!.endsWith('?preset')) response.setHeader('vary', 'accept')
    if (writer === 'send') {
      send(response, answer.status, { ...answer.headers }, byteString(answer.body ?? ''))
    } else {
      response.writeHead(answer.status, { ...answer.headers })
      response.end(answer.body)
    }
    calledWriteHead.push(called)
  })
  if (settings.keepAliveTimeout !== undefined) server.keepAliveTimeout = settings.keepAliveTimeout
  if (settings.maxRequestsPerSocket !== undefined) server.maxRequestsPerSocket = settings.maxRequestsPerSocket
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve))
  return { port: (server.address() as net.AddressInfo).port, calledWriteHead }
}

async function stop(): Promise<void> {
  const running = server
  server = undefined
  if (running === undefined) return
  running.closeAllConnections()
  await new Promise((resolve) => running.close(resolve))
}

afterEach(stop)

/**
 * Sends the requests one after another on one connection and returns each answer's bytes,
 * Date's value masked (the two servers may answer in different seconds), and whether the
 * server closed the connection after the last (waited for when `closes`).
 */
function exchange(port: number, requests: string[], closes = false): Promise<{ answers: string[]; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: '127.0.0.1' })
    const answers: string[] = []
    let buffered = ''
    socket.setTimeout(5000, () => socket.destroy(new Error('no answer')))
    socket.on('error', reject)
    const next = () => {
      if (answers.length === requests.length) {
        // A connection expected to close must get the server's FIN (waited for); one kept is
        // shown kept by the next request's answer on the same socket.
        if (!closes) {
          socket.destroy()
          return resolve({ answers, closed: false })
        }
        socket.once('end', () => {
          socket.destroy()
          resolve({ answers, closed: true })
        })
        return
      }
      socket.write(requests[answers.length]!)
    }
    socket.on('data', (chunk: Buffer) => {
      if (answers.length === requests.length) return
      buffered += chunk.toString('latin1')
      const end = buffered.indexOf('\r\n\r\n')
      if (end < 0) return
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(buffered.slice(0, end))?.[1] ?? 0)
      if (buffered.length < end + 4 + length) return
      answers.push(buffered.slice(0, end + 4 + length).replace(/\r\nDate: [^\r]+/, '\r\nDate: <masked>'))
      buffered = buffered.slice(end + 4 + length)
      next()
    })
    socket.on('connect', next)
  })
}

const get = (path: string, extra = '') => `GET ${path} HTTP/1.1\r\nHost: localhost\r\n${extra}\r\n`

/** The same exchange against a server of each writer: the bytes and which wrote the heads. */
async function all(requests: string[], settings: Parameters<typeof serve>[1] = {}, closes = false) {
  const results = {} as Record<Writer, { answers: string[]; closed: boolean; calledWriteHead: boolean[] }>
  for (const writer of ['node', 'send'] as const) {
    const { port, calledWriteHead } = await serve(writer, settings)
    try {
      results[writer] = { ...(await exchange(port, requests, closes)), calledWriteHead }
    } finally {
      await stop()
    }
  }
  return results
}

describe('a head written by the module', () => {
  for (const path of Object.keys(ANSWERS)) {
    for (const keepAliveTimeout of [5000, 65_000, 0]) {
      it(`${path} with keepAliveTimeout ${keepAliveTimeout}: the bytes Node writes, without writeHead`, async () => {
        const { node, send } = await all([get(path), get(path)], { keepAliveTimeout })
        expect(send.answers).toEqual(node.answers)
        expect(send.answers).toHaveLength(2)
        expect(send.answers[0]).toContain('\r\nDate: <masked>\r\nConnection: keep-alive\r\n')
        expect(send.closed).toBe(false)
        expect(node.calledWriteHead).toEqual([true, true])
        expect(send.calledWriteHead).toEqual([false, false])
      })
    }
  }

  it('writes the Date of the current second', async () => {
    const { port } = await serve('send')
    const socket = net.connect({ port, host: '127.0.0.1' })
    const text = await new Promise<string>((resolve) => {
      socket.once('data', (chunk: Buffer) => resolve(chunk.toString('latin1')))
      socket.write(get('/ok'))
    })
    socket.destroy()
    const date = Date.parse(/\r\nDate: ([^\r]+)/.exec(text)![1]!)
    expect(Math.abs(Date.now() - date)).toBeLessThan(2000)
  })
})

describe('left to writeHead, with the same bytes', () => {
  it('a request that asks to close the connection', async () => {
    const { node, send } = await all([get('/ok', 'Connection: close\r\n')], {}, true)
    expect(node.answers).toHaveLength(1)
    expect(send.answers).toEqual(node.answers)
    expect(send.closed).toBe(true)
    expect(send.calledWriteHead).toEqual([true])
    expect(send.answers[0]).toContain('\r\nConnection: close\r\n')
    // The body in bytes, through writeHead too.
    const utf8 = await all(['GET /utf8 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'], {}, true)
    expect(utf8.send.answers).toEqual(utf8.node.answers)
    expect(Buffer.from(utf8.send.answers[0]!, 'latin1').toString('utf8')).toContain(UTF8_BODY)
    expect(utf8.send.calledWriteHead).toEqual([true])
  })

  it('an HTTP/1.0 client', async () => {
    const { node, send } = await all(['GET /ok HTTP/1.0\r\nHost: localhost\r\n\r\n'], {}, true)
    expect(send.answers).toEqual(node.answers)
    expect(send.closed).toBe(true)
    expect(send.calledWriteHead).toEqual([true])
  })

  it('a response with a field set before', async () => {
    const { node, send } = await all([get('/ok?preset')])
    expect(send.answers).toEqual(node.answers)
    expect(send.calledWriteHead).toEqual([true])
    expect(send.answers[0]).toContain('\r\nvary: accept\r\n')
  })

  it('the last request a socket may carry (maxRequestsPerSocket), after written ones with max=', async () => {
    const requests = [get('/ok'), get('/not-modified'), get('/utf8')]
    const { node, send } = await all(requests, { maxRequestsPerSocket: 3 })
    expect(send.answers).toEqual(node.answers)
    expect(send.calledWriteHead).toEqual([false, false, true])
    expect(send.answers[0]).toContain('\r\nKeep-Alive: timeout=5, max=3\r\n')
    expect(send.answers[2]).toContain('\r\nConnection: close\r\n')
  })

  it('a 200 without a length (Node would send it chunked)', async () => {
    const { port, calledWriteHead } = await serve('node')
    server!.removeAllListeners('request')
    server!.on('request', (_request: http.IncomingMessage, response: http.ServerResponse) => {
      const original = response.writeHead.bind(response) as (...args: unknown[]) => http.ServerResponse
      let called = false
      response.writeHead = ((...args: unknown[]) => {
        called = true
        return original(...args)
      }) as typeof response.writeHead
      send(response, 200, { 'content-type': 'text/plain' }, byteString('chunked'))
      calledWriteHead.push(called)
    })
    const { answers } = await exchange(port, [get('/ok')])
    expect(calledWriteHead).toEqual([true])
    expect(answers[0]).toContain('\r\nTransfer-Encoding: chunked\r\n')
  })
})

describe('bodies as bytes', () => {
  it('byteString gives the UTF-8 bytes, and ASCII text itself', () => {
    expect(Buffer.from(byteString(UTF8_BODY), 'latin1')).toEqual(Buffer.from(UTF8_BODY, 'utf8'))
    expect(byteString(UTF8_BODY)).toHaveLength(Buffer.byteLength(UTF8_BODY))
    expect(byteString(BODY)).toBe(BODY)
  })

  it('problemBytes is problemJson in bytes, for a detail in any script and with field errors', () => {
    const problems: Problem[] = [
      { code: 'student_not_found', detail: 'No student “Zoë” ✓ 😀 here.' },
      { code: 'api_key_missing', detail: 'plain' },
      { code: 'invalid_request', detail: 'bad', errors: [{ in: 'body', field: '/tier', detail: 'é' }] },
    ]
    for (const problem of problems) {
      for (const requestId of ['5f0c8a52-3c1e-4d7a-9a53-0e2f1b6c7d88', 'id-ü']) {
        // Twice: the second comes from the cached prefix.
        for (let i = 0; i < 2; i++)
          expect(Buffer.from(problemBytes(problem, requestId), 'latin1')).toEqual(
            Buffer.from(problemJson(problem, requestId), 'utf8'),
          )
      }
    }
  })
})
