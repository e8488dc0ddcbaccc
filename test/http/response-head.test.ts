/**
 * The fast path's heads (src/http/response-head.ts) are byte for byte what Node's writeHead
 * writes, on a real socket: for each status the fast path sends, with each keep-alive setting
 * of the server, and for every exchange the module leaves to writeHead (a connection that
 * closes, an HTTP/1.0 client, a field set before, the last request a socket may carry). Each
 * case also checks which of the two wrote the head, so that a module that always fell back to
 * writeHead (and so trivially wrote the same bytes) fails.
 */
import http from 'node:http'
import net from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { writeHead } from '../../src/http/response-head.js'

const BODY = '{"data":[{"id":"explorer"}]}'

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
  '/limited': {
    status: 429,
    headers: { 'retry-after': '17', 'content-type': 'application/problem+json; charset=utf-8', 'content-length': '2' },
    body: '{}',
  },
}

type Writer = 'module' | 'node'
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
    if (writer === 'module') writeHead(response, answer.status, { ...answer.headers })
    else response.writeHead(answer.status, { ...answer.headers })
    calledWriteHead.push(called)
    response.end(answer.body)
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
 * server closed the connection after the last.
 */
function exchange(port: number, requests: string[]): Promise<{ answers: string[]; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: '127.0.0.1' })
    const answers: string[] = []
    let buffered = ''
    let closed = false
    socket.setTimeout(5000, () => socket.destroy(new Error('no answer')))
    socket.on('error', reject)
    const next = () => {
      if (answers.length === requests.length) {
        // A closing server has sent FIN by now or does so at once; a kept one stays silent.
        const wait = setTimeout(() => {
          socket.destroy()
          resolve({ answers, closed })
        }, 100)
        socket.once('end', () => {
          closed = true
          clearTimeout(wait)
          socket.destroy()
          resolve({ answers, closed })
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
async function both(requests: string[], settings: Parameters<typeof serve>[1] = {}) {
  const results = {} as Record<Writer, { answers: string[]; closed: boolean; calledWriteHead: boolean[] }>
  for (const writer of ['node', 'module'] as const) {
    const { port, calledWriteHead } = await serve(writer, settings)
    try {
      results[writer] = { ...(await exchange(port, requests)), calledWriteHead }
    } finally {
      await stop()
    }
  }
  return results
}

describe('a head written by the module', () => {
  for (const path of Object.keys(ANSWERS)) {
    for (const keepAliveTimeout of [5000, 65_000, 0]) {
      it(`${path} with keepAliveTimeout ${keepAliveTimeout}: the bytes writeHead writes, without writeHead`, async () => {
        const { node, module } = await both([get(path), get(path)], { keepAliveTimeout })
        expect(module.answers).toEqual(node.answers)
        expect(module.answers).toHaveLength(2)
        expect(module.answers[0]).toContain('\r\nDate: <masked>\r\nConnection: keep-alive\r\n')
        expect(module.closed).toBe(false)
        expect(node.calledWriteHead).toEqual([true, true])
        expect(module.calledWriteHead).toEqual([false, false])
      })
    }
  }

  it('writes the Date of the current second', async () => {
    const { port } = await serve('module')
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
    const { node, module } = await both([get('/ok', 'Connection: close\r\n')])
    expect(module.answers).toEqual(node.answers)
    expect(module.answers[0]).toContain('\r\nConnection: close\r\n')
    expect(module.closed).toBe(true)
    expect(module.calledWriteHead).toEqual([true])
  })

  it('an HTTP/1.0 client', async () => {
    const { node, module } = await both(['GET /ok HTTP/1.0\r\nHost: localhost\r\n\r\n'])
    expect(module.answers).toEqual(node.answers)
    expect(module.closed).toBe(true)
    expect(module.calledWriteHead).toEqual([true])
  })

  it('a response with a field set before', async () => {
    const { node, module } = await both([get('/ok?preset')])
    expect(module.answers).toEqual(node.answers)
    expect(module.answers[0]).toContain('\r\nvary: accept\r\n')
    expect(module.calledWriteHead).toEqual([true])
  })

  it('the last request a socket may carry (maxRequestsPerSocket), after written ones with max=', async () => {
    const { node, module } = await both([get('/ok'), get('/not-modified'), get('/ok')], { maxRequestsPerSocket: 3 })
    expect(module.answers).toEqual(node.answers)
    expect(module.answers[0]).toContain('\r\nKeep-Alive: timeout=5, max=3\r\n')
    expect(module.answers[2]).toContain('\r\nConnection: close\r\n')
    expect(module.calledWriteHead).toEqual([false, false, true])
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
      writeHead(response, 200, { 'content-type': 'text/plain' })
      calledWriteHead.push(called)
      response.end('chunked')
    })
    const { answers } = await exchange(port, [get('/ok')])
    expect(calledWriteHead).toEqual([true])
    expect(answers[0]).toContain('\r\nTransfer-Encoding: chunked\r\n')
  })
})
