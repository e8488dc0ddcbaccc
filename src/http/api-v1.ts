/**
 * `/api/v1` as one encapsulated Fastify plugin, registered with that prefix.
 *
 * Authentication is a hook of this plugin, so it runs for every route registered here and for
 * this prefix's not-found handler, and for nothing else. Whether a request needs a key is
 * decided by the route the router matched (after it decoded and parsed the request target),
 * never by a string test on the raw URL: `/%61pi/v1/tiers`, `/api/%761/tiers` and the
 * absolute form `GET http://host/api/v1/tiers` reach the same route and so the same hook as
 * `/api/v1/tiers`. A handler here can only run after the hook admitted a key.
 *
 * The OpenAPI document (`/api/v1/openapi.json`) is registered outside, on the root: it is
 * documentation, not data, and needs no key.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Clock } from '../clock.js'
import type { CatalogState } from '../services/catalog-state.js'
import type { Storage } from '../storage/connection.js'
import { type AccessControlOptions, createAuthentication } from './access-control.js'
import type { CatalogRepresentations } from './catalog-representations.js'
import type { TypedApp } from './app-types.js'
import { methodGuard } from './method-guards.js'
import { notFoundProblem, sendProblem } from './problem-responses.js'
import { catalogRoutes } from './routes/catalog.js'
import { deletionAttestationRoutes } from './routes/deletion-attestations.js'
import { studentRoutes } from './routes/students.js'
import { syncRoutes } from './routes/sync.js'

export interface ApiV1Options {
  access: AccessControlOptions
  storage: Storage
  catalog: CatalogState<CatalogRepresentations>
  clock: Clock
}

export async function apiV1(api: TypedApp, options: ApiV1Options): Promise<void> {
  api.addHook('onRequest', createAuthentication(options.access))

  // Every route's methods, gathered as they are registered, so that each path's 405 guard
  // is derived from what exists rather than from a list kept by hand.
  const methods = new Map<string, Set<string>>()
  api.addHook('onRoute', (route) => {
    if (route.config?.allow !== undefined) return
    const set = methods.get(route.routePath) ?? new Set<string>()
    for (const method of [route.method].flat()) set.add(method)
    methods.set(route.routePath, set)
  })

  catalogRoutes(api, options.catalog)
  studentRoutes(api, { storage: options.storage, catalog: options.catalog, clock: options.clock })
  await syncRoutes(api, { storage: options.storage, clock: options.clock })
  deletionAttestationRoutes(api, { storage: options.storage, clock: options.clock })

  for (const [url, allowed] of methods) methodGuard(api, url, [...allowed])

  // Runs after this plugin's authentication hook: an unknown API path answers 401 to a
  // caller without a key (paths are not enumerable without one), 404 to one with a key.
  api.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) =>
    sendProblem(request, reply, notFoundProblem(request)),
  )
}
