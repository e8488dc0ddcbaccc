/**
 * Response declarations shared by the routes: content types, documented headers, and the
 * problem responses each route can give. These feed both Fastify (serialization) and the
 * OpenAPI document.
 */
import { Type } from 'typebox'
import { PROBLEM_CATALOG, type ProblemCode } from '../../errors.js'

const REQUEST_ID = {
  type: 'string',
  description: 'Identifier of this request, also in problem bodies; quote it to the operator.',
}

export const RATE_LIMIT_HEADERS = {
  'RateLimit-Policy': {
    type: 'string',
    description:
      'The quota policies (IETF draft-10): the key\'s own, `"default";q=<limit>;w=<window seconds>`, ' +
      'then its organisation\'s (all its keys together), `"organisation";q=<limit>;w=<window seconds>`.',
  },
  RateLimit: {
    type: 'string',
    description:
      'Current quota per policy (IETF draft-10): ' +
      '`"default";r=<requests left>;t=<seconds until one more is available>`, ' +
      'then `"organisation";r=...;t=...` once the key\'s own limit admitted the request.',
  },
  'X-RateLimit-Limit': { type: 'integer', description: 'Requests allowed per key in any rolling window.' },
  'X-RateLimit-Remaining': { type: 'integer', description: 'Requests left in the current window.' },
  'X-RateLimit-Reset': { type: 'integer', description: 'Unix time (seconds) when one more request becomes available.' },
} as const

/** On the answers to a rolled key only (key-sunset-headers.ts). */
export const ROLLED_KEY_HEADERS = {
  Deprecation: {
    type: 'string',
    description:
      'Only when the key was rolled: `@<Unix seconds>` (RFC 9745), when it was rolled. Move to its replacement.',
  },
  Sunset: {
    type: 'string',
    description: 'Only when the key was rolled: the HTTP-date (RFC 8594) at which this key stops working.',
  },
} as const

const COMMON_HEADERS = { 'X-Request-Id': REQUEST_ID }

export function jsonResponse(ref: string, description: string, extraHeaders: Record<string, object> = {}) {
  return {
    description,
    headers: { ...COMMON_HEADERS, ...RATE_LIMIT_HEADERS, ...ROLLED_KEY_HEADERS, ...extraHeaders },
    content: { 'application/json': { schema: Type.Ref(ref) } },
  }
}

export const ETAG_HEADER = {
  ETag: { type: 'string', description: 'Strong validator of this representation; send it back in If-None-Match.' },
  'Cache-Control': { type: 'string', description: '`private, no-cache`: store, but revalidate with If-None-Match.' },
}

export const NOT_MODIFIED = {
  type: 'null',
  description: 'Not Modified: the representation matches If-None-Match; the body is empty.',
  headers: { ...COMMON_HEADERS, ...RATE_LIMIT_HEADERS, ...ROLLED_KEY_HEADERS, ...ETAG_HEADER },
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  410: 'Gone',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
}

const STATUS_HEADERS: Record<number, Record<string, object>> = {
  401: { 'WWW-Authenticate': { type: 'string', description: 'RFC 6750 Bearer challenge.' } },
  403: {
    'WWW-Authenticate': {
      type: 'string',
      description: 'RFC 6750 challenge with `error="insufficient_scope"` and the scope needed.',
    },
  },
  405: { Allow: { type: 'string', description: 'Methods the endpoint accepts.' } },
  429: { 'Retry-After': { type: 'integer', description: 'Seconds to wait before retrying.' } },
  503: { 'Retry-After': { type: 'integer', description: 'Seconds to wait before retrying.' } },
}

/** Problem responses for the given statuses; the description names the codes each can carry. */
export function problemResponses(codes: readonly ProblemCode[]) {
  const byStatus = new Map<number, ProblemCode[]>()
  for (const code of codes) {
    const status = PROBLEM_CATALOG[code].status
    byStatus.set(status, [...(byStatus.get(status) ?? []), code])
  }
  const responses: Record<number, object> = {}
  for (const [status, list] of [...byStatus].sort((a, b) => a[0] - b[0])) {
    responses[status] = {
      description: `${STATUS_TEXT[status] ?? 'Error'}: ${list.map((code) => `\`${code}\``).join(', ')}.`,
      headers: { ...COMMON_HEADERS, ...(status === 401 ? {} : RATE_LIMIT_HEADERS), ...(STATUS_HEADERS[status] ?? {}) },
      content: { 'application/problem+json': { schema: Type.Ref('Problem') } },
    }
  }
  return responses
}

/** Problems any authenticated /api/v1 route can answer with. */
export const AUTHENTICATED_PROBLEMS: readonly ProblemCode[] = [
  'invalid_request',
  'api_key_missing',
  'api_key_invalid',
  'api_key_expired',
  'api_key_revoked',
  'organisation_suspended',
  'rate_limited',
  'too_many_failed_authentications',
  'internal_error',
]
