/**
 * The catalog of problem codes (RFC 9457 problem details). A code is a promise to partners:
 * once published it keeps its meaning and status, and a retired code is never reused.
 * The API guide's error table (docs/api.md) and the OpenAPI error schema are checked against this list by tests.
 */

export const PROBLEM_CATALOG = {
  invalid_request: {
    status: 400,
    title: 'Invalid request',
    description:
      'A path segment, query parameter or body field is missing, unknown or has a wrong value. ' +
      '`errors` lists each problem.',
  },
  malformed_json: {
    status: 400,
    title: 'Malformed JSON body',
    description:
      'The request body is not valid JSON (or is empty while `Content-Type: application/json` says there is one).',
  },
  api_key_missing: {
    status: 401,
    title: 'API key missing',
    description: 'No `Authorization: Bearer <key>` header was sent. Keys are never accepted in the URL.',
  },
  api_key_invalid: {
    status: 401,
    title: 'API key not recognised',
    description:
      'The bearer token is not a key this service issued. ' +
      'Check that it was copied whole; keys are created in the dashboard.',
  },
  api_key_expired: {
    status: 401,
    title: 'API key expired',
    description: 'The key passed its expiry date. Create a new key in the dashboard.',
  },
  api_key_revoked: {
    status: 401,
    title: 'API key revoked',
    description:
      'The key was revoked, by your organisation in the dashboard or by the operator, and can no longer be used. ' +
      'Create a new key in the dashboard.',
  },
  insufficient_scope: {
    status: 403,
    title: 'Insufficient scope',
    description:
      'The key lacks the scope this endpoint needs (`students:read` or `students:write`); ' +
      'the `WWW-Authenticate` header names it. Create a key with that scope in the dashboard: ' +
      'any scope on a test key, the scopes granted to your organisation on a live key.',
  },
  agreement_required: {
    status: 403,
    title: 'Data-sharing agreement required',
    description:
      "A live key's student endpoints need an active signed data-sharing agreement on the key's organisation, " +
      'recorded by the operator. Sandbox test keys need none.',
  },
  organisation_suspended: {
    status: 403,
    title: 'Organisation suspended',
    description:
      "The key's organisation is suspended by the operator; all its keys are refused until it is reinstated.",
  },
  route_not_found: {
    status: 404,
    title: 'Route not found',
    description: 'No endpoint has this path. Every path starts with `/api/v1`; v1 is the only version.',
  },
  lesson_not_found: {
    status: 404,
    title: 'Lesson not found',
    description: 'No lesson has this slug.',
  },
  student_not_found: {
    status: 404,
    title: 'Student not found',
    description: "No student with this id is linked to the key's organisation.",
  },
  nothing_to_attest: {
    status: 404,
    title: 'Nothing to attest',
    description:
      "No ended data-sharing agreement of the key's organisation awaits a deletion attestation: none has ended, " +
      'a newer agreement is in force (the data is still shared under it), or `agreementId` names no ended ' +
      "agreement of the organisation. A test key's sandbox has no agreements.",
  },
  already_attested: {
    status: 409,
    title: 'Deletion already attested',
    description:
      'The deletion of the data shared under this agreement was attested already, in the dashboard or with a key; ' +
      'an attestation is recorded once. The detail says when.',
  },
  cursor_expired: {
    status: 410,
    title: 'Cursor expired',
    description:
      'The change feed keeps its changes for a set period (90 days unless the operator set another) and some ' +
      'after this cursor are gone, so following it would skip them. Resync: list the roster from the start ' +
      '(`GET /api/v1/students` without a cursor, every page) and replace your copy with it, then follow the feed ' +
      'from now (`GET /api/v1/progress/changes` without a cursor). Take the feed cursor before you list the ' +
      'roster, so that no change made during the listing is missed.',
  },
  method_not_allowed: {
    status: 405,
    title: 'Method not allowed',
    description: 'The endpoint exists but not for this method; the `Allow` header lists the methods it accepts.',
  },
  request_timeout: {
    status: 408,
    title: 'Request Timeout',
    description: 'The request headers or body did not arrive in time (`REQUEST_TIMEOUT_MS`); the connection is closed.',
  },
  payload_too_large: {
    status: 413,
    title: 'Request body too large',
    description: 'The request body exceeds the size limit.',
  },
  request_header_fields_too_large: {
    status: 431,
    title: 'Request Header Fields Too Large',
    description: 'The request headers exceed the size limit; the connection is closed.',
  },
  unsupported_media_type: {
    status: 415,
    title: 'Unsupported media type',
    description: 'Request bodies must be JSON, sent with `Content-Type: application/json`.',
  },
  rate_limited: {
    status: 429,
    title: 'Rate limit exceeded',
    description:
      'The key made as many requests as its limit allows in the rolling window; `Retry-After` says when to retry.',
  },
  too_many_failed_authentications: {
    status: 429,
    title: 'Too many failed authentications',
    description:
      'Too many requests from this address carried a missing or wrong key; `Retry-After` says when to retry.',
  },
  internal_error: {
    status: 500,
    title: 'Internal error',
    description: 'Something failed on our side. The `requestId` lets the operator find it in the logs.',
  },
  storage_unavailable: {
    status: 503,
    title: 'Storage unavailable',
    description: 'The database could not be reached in time; `Retry-After` says when to retry.',
  },
  not_ready: {
    status: 503,
    title: 'Not ready',
    description:
      'Only `GET /readyz` answers it: this instance cannot serve yet, because the database does not list ' +
      'exactly the migrations its code knows; `checks` names the failing check. A load balancer sends ' +
      'requests to other instances meanwhile.',
  },
} as const satisfies Record<string, { status: number; title: string; description: string }>

export type ProblemCode = keyof typeof PROBLEM_CATALOG

export const PROBLEM_CODES = Object.keys(PROBLEM_CATALOG) as ProblemCode[]

/** Where a validation problem was found, as reported to the client. */
export type ProblemLocation = 'path' | 'query' | 'header' | 'body'

export interface FieldProblem {
  in: ProblemLocation
  /** The parameter name (path, query, header) or a JSON pointer into the body ('' for the body itself). */
  field: string
  detail: string
}

export interface ProblemOptions {
  headers?: Record<string, string>
  errors?: FieldProblem[]
  /** RFC 9457 extension members beside the standard ones, e.g. the readiness `checks`. */
  extensions?: Readonly<Record<string, unknown>>
  cause?: unknown
}

/** What a problem+json response is made of. */
export interface Problem {
  readonly code: ProblemCode
  readonly detail: string
  readonly headers?: Readonly<Record<string, string>>
  readonly errors?: readonly FieldProblem[] | undefined
  readonly extensions?: Readonly<Record<string, unknown>> | undefined
}

/** A client-facing failure. Thrown anywhere; rendered once, by the error handler, as problem+json. */
export class ProblemError extends Error implements Problem {
  override name = 'ProblemError'
  readonly code: ProblemCode
  readonly status: number
  readonly detail: string
  readonly headers: Readonly<Record<string, string>>
  readonly errors: readonly FieldProblem[] | undefined
  readonly extensions: Readonly<Record<string, unknown>> | undefined

  constructor(code: ProblemCode, detail: string, options: ProblemOptions = {}) {
    super(detail, options.cause === undefined ? undefined : { cause: options.cause })
    this.code = code
    this.status = PROBLEM_CATALOG[code].status
    this.detail = detail
    this.headers = options.headers ?? {}
    this.errors = options.errors
    this.extensions = options.extensions
  }
}

/** Relative reference to the human documentation of a problem type (served by /docs/errors). */
export function problemType(code: ProblemCode): string {
  return `/docs/errors#${code}`
}
