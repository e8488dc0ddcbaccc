/**
 * Authentication is decided by the route the router matched, so no spelling of an API path
 * reaches data without a key: percent-encoded letters, an encoded slash, doubled slashes, dot
 * segments, a trailing slash, the absolute form of the request target (RFC 9112 3.2.2). Sent
 * byte for byte over real sockets, with and without the fast path in front of the router.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { ManualClock } from '../../src/clock.js'
import type { TypedApp } from '../../src/http/app-types.js'
import type { Storage } from '../../src/storage/connection.js'
import { rawRequest } from '../support/raw-http.js'
import {
  createTestStorage,
  type Fixtures,
  requestPathOptions,
  seedFixtures,
  START,
  STUDENTS,
  testConfig,
} from '../helper.js'

interface Route {
  method: string
  path: string
  query?: string
  body?: string
}

const ROUTES: Route[] = [
  { method: 'GET', path: '/api/v1/tiers' },
  { method: 'HEAD', path: '/api/v1/tiers' },
  { method: 'GET', path: '/api/v1/lessons' },
  { method: 'GET', path: '/api/v1/lessons', query: '?tier=builder' },
  { method: 'GET', path: '/api/v1/lessons', query: '?standard=1B-AP-08' },
  { method: 'GET', path: '/api/v1/lessons/explorer/e1-robots-follow-instructions' },
  { method: 'GET', path: `/api/v1/students/${STUDENTS.ada}/progress` },
  { method: 'POST', path: `/api/v1/students/${STUDENTS.ada}/enroll`, body: '{"tier":"innovator"}' },
]

const hex = (c: string) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`

/** Every way of writing `path` that a router might read as the same path. */
export function disguises(path: string): string[] {
  const segments = path.split('/').slice(1)
  const out = new Set<string>([path])
  const join = (parts: string[]) => `/${parts.join('/')}`
  segments.forEach((segment, i) => {
    // One encoded letter per segment, lower- and upper-case hex, and every letter encoded.
    const first = segment.search(/[a-z]/i)
    if (first >= 0) {
      const encoded = segment.slice(0, first) + hex(segment[first]!) + segment.slice(first + 1)
      out.add(join(segments.map((s, j) => (j === i ? encoded : s))))
      out.add(
        join(
          segments.map((s, j) =>
            j === i ? encoded.replace(/%([0-9a-f]{2})/, (_m, h: string) => `%${h.toUpperCase()}`) : s,
          ),
        ),
      )
    }
    out.add(join(segments.map((s, j) => (j === i ? [...s].map((c) => (/[a-z]/i.test(c) ? hex(c) : c)).join('') : s))))
    if (i > 0) {
      // An encoded slash in place of a real one, and a doubled slash.
      out.add(`/${segments.slice(0, i).join('/')}%2F${segments.slice(i).join('/')}`)
      out.add(`/${segments.slice(0, i).join('/')}%2f${segments.slice(i).join('/')}`)
      out.add(`/${segments.slice(0, i).join('/')}//${segments.slice(i).join('/')}`)
      // Dot segments, plain and encoded.
      out.add(`/${segments.slice(0, i).join('/')}/./${segments.slice(i).join('/')}`)
      out.add(`/${segments.slice(0, i).join('/')}/x/../${segments.slice(i).join('/')}`)
      out.add(`/${segments.slice(0, i).join('/')}/%2e/${segments.slice(i).join('/')}`)
      out.add(`/${segments.slice(0, i).join('/')}/x/%2e%2e/${segments.slice(i).join('/')}`)
    }
  })
  out.add(`/${path}`)
  out.add(`${path}/`)
  out.add(`${path}/.`)
  out.add(`${path};x`)
  out.add(path.toUpperCase())
  return [...out]
}

function targets(route: Route): string[] {
  const query = route.query ?? ''
  const paths = disguises(route.path).map((p) => p + query)
  return [
    ...paths,
    ...paths.map((p) => `http://x${p}`),
    `HTTP://X:1${route.path}${query}`,
    `http://user@x${route.path}${query}`,
  ]
}

describe('path disguises never skip authentication', () => {
  const clock = new ManualClock(START)
  let storage: Storage
  let fixtures: Fixtures
  const servers: { name: string; app: TypedApp; base: string }[] = []

  beforeAll(async () => {
    storage = await createTestStorage()
    fixtures = await seedFixtures(storage, clock.now())
    for (const path of ['fast', 'plain'] as const) {
      // A high failure limit: this test sends hundreds of keyless requests from one address.
      const app = await buildApp(
        requestPathOptions(
          { config: testConfig({ AUTH_FAILURE_LIMIT: '1000000' }), storage, clock, logger: false },
          path,
        ),
      )
      const base = await app.listen({ port: 0, host: '127.0.0.1' })
      servers.push({ name: path === 'fast' ? 'fast path' : 'router only', app, base })
    }
  })

  afterAll(async () => {
    for (const server of servers) await server.app.close()
    await storage?.close()
  })

  it('generates the disguises the attack used', () => {
    const all = ROUTES.flatMap(targets)
    for (const target of [
      '/%61pi/v1/tiers',
      '/api/%761/tiers',
      '/api/v1/%74iers',
      'http://x/api/v1/tiers',
      '//api/v1/tiers',
      '/api/v1/tiers/',
    ]) {
      expect(all).toContain(target)
    }
  })

  for (const route of ROUTES) {
    it(`${route.method} ${route.path}${route.query ?? ''}: every spelling without a key is 401 or 404`, async () => {
      for (const server of servers) {
        for (const target of targets(route)) {
          const headers: Record<string, string> = route.body === undefined ? {} : { 'content-type': 'application/json' }
          for (const authorization of [undefined, 'Bearer cur_live_not-a-key', 'Basic YTpi']) {
            const sent = authorization === undefined ? headers : { ...headers, authorization }
            const response = await rawRequest(server.base, target, {
              method: route.method,
              headers: sent,
              body: route.body,
            })
            const seen = `${server.name}: ${route.method} ${target} (${authorization ?? 'no key'}) -> ${response.status}`
            expect([401, 404], seen).toContain(response.status)
            if (route.method !== 'HEAD')
              expect(response.headers['content-type'], seen).toMatch(/^application\/problem\+json/)
          }
        }
      }
    })
  }

  it('a key still reaches the same route through a disguise (the router decodes; nothing is refused for its spelling)', async () => {
    const authorization = `Bearer ${fixtures.keys.readWrite}`
    for (const server of servers) {
      for (const target of [
        '/%61pi/v1/tiers',
        'http://x/api/v1/tiers',
        `/api/v1/students/${STUDENTS.ada}/%70rogress`,
      ]) {
        const response = await rawRequest(server.base, target, { headers: { authorization } })
        expect(response.status, `${server.name}: ${target}`).toBe(200)
      }
    }
  })

  it('no keyless enroll changed the student', async () => {
    const row = await storage.db
      .selectFrom('students')
      .select('tier')
      .where('id', '=', STUDENTS.ada)
      .executeTakeFirstOrThrow()
    expect(row.tier).toBe('explorer')
  })
})
