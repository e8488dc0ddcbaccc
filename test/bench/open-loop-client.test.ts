/**
 * The benchmark's open-loop generator (bench/open-loop-client.c): the open-loop rows' latency
 * is only as good as its framing and counting. Against a local server answering with a
 * Content-Length body, a chunked body and a 304 in turn, every due request must be answered
 * and counted under its status, and a server that stalls must show in the latency (counted
 * from the due time, not from when a connection was free).
 */
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const SOURCE = path.join(import.meta.dirname, '..', '..', 'bench', 'open-loop-client.c')

interface Result {
  requests: number
  errors: Record<string, number>
  statuses: Record<string, number>
  latencyUs: { p50: number; max: number }
  openLoop: { due: number; client: string }
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'open-loop-'))
const binary = path.join(dir, 'open-loop-client')
const compiled = spawnSync(process.env.CC ?? 'cc', ['-O2', '-o', binary, SOURCE], {
  encoding: 'utf8',
})

function run(port: number, file: string, args: string[]): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, ['127.0.0.1', String(port), file, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.on('data', (chunk) => (out += chunk))
    child.stderr.on('data', (chunk) => (err += chunk))
    child.on('error', reject)
    child.on('close', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('BENCH_RESULT '))
      if (code !== 0 || line === undefined) reject(new Error(`exit ${code}: ${out}${err}`))
      else resolve(JSON.parse(line.slice('BENCH_RESULT '.length)) as Result)
    })
  })
}

// The compiler is part of the machine, not of the project: without one the bench falls back to
// the Node generator, and there is nothing here to test.
describe.skipIf(compiled.error !== undefined)('open-loop generator', () => {
  let server: http.Server
  let port: number
  let stallUntil = 0
  const seen: string[] = []

  beforeAll(async () => {
    expect(compiled.status, compiled.stderr).toBe(0)
    let n = 0
    server = http.createServer((request, response) => {
      seen.push(`${request.method} ${request.url} ${request.headers.authorization} ${request.headers['if-none-match']}`)
      const answer = () => {
        const kind = n++ % 3
        if (kind === 0) response.writeHead(200, { 'content-length': 5 }).end('hello')
        else if (kind === 1) {
          // No Content-Length: Node sends the body chunked, in two chunks here.
          response.writeHead(201)
          response.write('chunk one ')
          setImmediate(() => response.end('and two'))
        } else response.writeHead(304).end()
      }
      const wait = stallUntil - Date.now()
      if (wait > 0) setTimeout(answer, wait)
      else answer()
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    port = (server.address() as AddressInfo).port
    fs.writeFileSync(path.join(dir, 'keys.txt'), 'key-a\nkey-b\n')
  })

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve))
    fs.rmSync(dir, { recursive: true, force: true })
  })

  it('answers every due request, framed and counted by status', async () => {
    seen.length = 0
    const result = await run(port, path.join(dir, 'keys.txt'), ['1', '4', '600', 'catalog', '/api/v1/tiers', '"v1"'])
    expect(result.openLoop.client).toBe('c')
    expect(result.openLoop.due).toBe(600)
    expect(result.requests).toBe(600)
    expect(Object.values(result.errors).every((count) => count === 0)).toBe(true)
    expect(result.statuses).toEqual({ '200': 200, '201': 200, '304': 200 })
    expect(new Set(seen)).toEqual(
      new Set(['GET /api/v1/tiers Bearer key-a "v1"', 'GET /api/v1/tiers Bearer key-b "v1"']),
    )
  })

  it('counts an answer sent with "Connection: close", and goes on on a new connection', async () => {
    const closing = http.createServer((_request, response) => {
      response.writeHead(200, { 'content-length': 2, connection: 'close' }).end('ok')
    })
    await new Promise<void>((resolve) => closing.listen(0, '127.0.0.1', resolve))
    try {
      const result = await run((closing.address() as AddressInfo).port, path.join(dir, 'keys.txt'), [
        '1',
        '4',
        '200',
        'catalog',
        '/x',
        '-',
      ])
      expect(result.requests).toBe(200)
      expect(result.statuses).toEqual({ '200': 200 })
      expect(Object.values(result.errors).every((count) => count === 0)).toBe(true)
    } finally {
      await new Promise((resolve) => closing.close(resolve))
    }
  })

  it('counts the time a request waited behind a stalled server from when it was due', async () => {
    // Every answer is held until about 700 ms into the second: the requests due meanwhile
    // queue behind the 2 connections, the first for nearly all of it.
    stallUntil = Date.now() + 800
    const result = await run(port, path.join(dir, 'keys.txt'), ['1', '2', '200', 'catalog', '/x', '-'])
    stallUntil = 0
    expect(result.requests).toBe(200)
    expect(result.latencyUs.max).toBeGreaterThan(500_000)
    // A closed loop would have sent only 2 requests during the stall, and measured the rest as
    // fast. Here the request due half-way waited for the stall's end too.
    expect(result.latencyUs.p50).toBeGreaterThan(50_000)
  })
})
