/**
 * Fastify answers an unrouted method with 404; HTTP wants 405 with `Allow` when the path
 * exists (RFC 9110 15.5.6). For each API path, one extra route takes every other method:
 * OPTIONS is answered by response-basics, anything else gets 405.
 */
import type { FastifyInstance } from 'fastify'
import { ProblemError } from '../errors.js'

export function methodGuard(app: FastifyInstance, url: string, allowed: readonly string[]): void {
  const allow = allowed.join(', ')
  const others = app.supportedMethods.filter((method) => !allowed.includes(method))
  app.route({
    method: others,
    url,
    config: { allow },
    schema: { hide: true } as object,
    handler: (request) => {
      throw new ProblemError(
        'method_not_allowed',
        `${request.method} is not allowed on ${(request.routeOptions.url ?? url).replace('*', ':slug')}; use ${allow}.`,
        {
          headers: { allow },
        },
      )
    },
  })
}
