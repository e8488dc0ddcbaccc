/**
 * Response serializers, compiled per route and status when a route first answers with it.
 *
 * Every route declares its problem responses (401, 403, 404, 429, 503, ...) so that the
 * OpenAPI document lists them, and Fastify would compile a fast-json-stringify serializer for
 * each one: the same Problem schema compiled again for every route and status, a visible part
 * of every start. Problems are always sent as ready JSON text (problem-responses.ts), so those
 * serializers would never run; error statuses get plain JSON.stringify instead, and success
 * bodies keep their compiled serializer, compiled on its first use, since most processes rarely
 * serve most routes and compiling them all would lengthen every start (figures:
 * docs/performance.md).
 */
import fastJson, { type Options, type Schema } from 'fast-json-stringify'

interface RouteDefinition {
  method: string
  url: string
  httpStatus: string
  schema?: unknown
}

const asJson = (data: unknown): string => JSON.stringify(data)

export function buildResponseSerializer(
  externalSchemas?: unknown,
  options?: Options,
): (route: RouteDefinition) => (data: unknown) => string {
  const shared = (externalSchemas ?? {}) as Record<string, Schema>
  return ({ schema, httpStatus }) => {
    if (httpStatus.startsWith('4') || httpStatus.startsWith('5') || httpStatus === 'default') return asJson
    const own = schema as Schema & { $id?: string }
    // As Fastify's own compiler does: a schema is not passed again among the shared ones.
    let refs = shared
    if (own.$id !== undefined && own.$id in shared) {
      refs = { ...shared }
      delete refs[own.$id]
    }
    let serialize: ((data: unknown) => string) | undefined
    return (data) => {
      serialize ??= fastJson(own, { ...options, schema: refs })
      return serialize(data)
    }
  }
}
