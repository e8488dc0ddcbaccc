/**
 * The catalog of problem codes (RFC 9457 problem details). A code is a promise to partners:
 * once published it keeps its meaning and status, and a retired code is never reused.
 * The API guide's error table (docs/api.md) and the OpenAPI error schema are checked against this list by tests,
 * and every code's `type` (problemType) leads to its section of /docs/errors, with the cause and fix written here.
 */

/** One code's entry; the error catalogue page (/docs/errors) gives each code a section with its cause and fix. */
interface CatalogEntry {
  status: number
  title: string
  /** One or two sentences: when the code is answered (the tables of /docs and /docs/errors). */
  description: string
  /** Why a partner's request gets it: the usual reasons, in the partner's terms. */
  cause: string
  /** What the partner should do about it. */
  fix: string
}

export const PROBLEM_CATALOG = {
  invalid_request: {
    status: 400,
    title: 'Invalid request',
    description:
      'A path segment, query parameter or body field is missing, unknown or has a wrong value. ' +
      '`errors` lists each problem.',
    cause:
      'One part of the request does not fit the endpoint: a path segment (a student id that is not a ' +
      'UUID), a query parameter (an unknown name such as `?teir=`, a `limit` outside 1 to 500, a cursor ' +
      "cut short, altered, or another organisation's) or a body field (missing, unknown, or of the " +
      'wrong type). Sending it again unchanged gets the same answer.',
    fix:
      'Read `errors`: each entry names where the problem is (`in`: path, query, header or body), the ' +
      '`field` and what is wrong (`detail`). Correct the request and send it again. The [API ' +
      'reference](/docs) lists every parameter and field of every endpoint; unknown query parameters ' +
      'are refused on purpose, so a typo never returns everything.',
  },
  malformed_json: {
    status: 400,
    title: 'Malformed JSON body',
    description:
      'The request body is not valid JSON (or is empty while `Content-Type: application/json` says there is one).',
    cause:
      'The body could not be read as JSON: a trailing comma, single quotes, an unquoted name, a body ' +
      'cut short, or no body at all with a `Content-Type: application/json` header.',
    fix:
      "Build the body with your language's JSON encoder (`JSON.stringify`, `json.dumps`) rather than " +
      'by hand, and send it as UTF-8. In a shell, put the body in single quotes so that the shell ' +
      'leaves its double quotes alone: `-d \'{"tier":"builder"}\'`. A request that has no body sends no ' +
      '`Content-Type` either.',
  },
  api_key_missing: {
    status: 401,
    title: 'API key missing',
    description: 'No `Authorization: Bearer <key>` header was sent. Keys are never accepted in the URL.',
    cause:
      'The request carried no `Authorization` header, or one of another scheme (`Basic`, or a bare key ' +
      'without `Bearer `). A key in the URL or in any other header is not read.',
    fix:
      'Send `Authorization: Bearer <key>` on every `/api/v1` request (the OpenAPI document, `/docs` and ' +
      'the health checks need none). A client library\'s "bearer token" or "API key in header" setting ' +
      'sends it so. Your keys are in the [dashboard](/dashboard).',
  },
  api_key_invalid: {
    status: 401,
    title: 'API key not recognised',
    description:
      'The bearer token is not a key this service issued. ' +
      'Check that it was copied whole; keys are created in the dashboard.',
    cause:
      'The bearer token is not a key this service issued: a key copied in part or with a character ' +
      'changed (keys carry a checksum), a key of another deployment of the service (a staging key sent ' +
      'to production), a placeholder such as `cur_test_...` left in an example, or an empty token: in a ' +
      'shell, an unset `API_KEY` sends `Bearer ` alone, and `$API_KEY` in single quotes is sent as ' +
      'those eight characters.',
    fix:
      'Check that `API_KEY` is set (`echo "$API_KEY"`) and quoted with double quotes, and that ' +
      '`BASE_URL` names the deployment the key belongs to. Copy the key again, whole (`cur_test_` or ' +
      '`cur_live_` and 38 more characters), from where you stored it: the dashboard shows a key once ' +
      'and keeps only its hash. If it is lost, create a new key in the [dashboard](/dashboard) and ' +
      'revoke the old one.',
  },
  api_key_expired: {
    status: 401,
    title: 'API key expired',
    description: 'The key passed its expiry date. Create a new key in the dashboard.',
    cause:
      'The key was created with an expiry date, and that date has passed. An expired key stays listed ' +
      'in the dashboard but is refused everywhere.',
    fix:
      'Create a new key in the [dashboard](/dashboard) with the same scopes, deploy it, and stop using ' +
      "the old one. The dashboard mails your organisation's owners and developers 7 days before a live " +
      'key expires, so the next rotation can be planned.',
  },
  api_key_revoked: {
    status: 401,
    title: 'API key revoked',
    description:
      'The key was revoked, by your organisation in the dashboard or by the operator, and can no longer be used. ' +
      'Create a new key in the dashboard.',
    cause:
      'The key was revoked: by a member of your organisation in the dashboard (after a leak, or when it ' +
      'was replaced), or by the operator. A revoked key is refused by every instance within seconds and ' +
      'never works again.',
    fix:
      'Create a new key in the [dashboard](/dashboard) and deploy it where the revoked one was used. If ' +
      'nobody in your organisation revoked it, the key list shows when it was revoked; write to the ' +
      'operator to learn why.',
  },
  insufficient_scope: {
    status: 403,
    title: 'Insufficient scope',
    description:
      'The key lacks the scope this endpoint needs (`students:read` or `students:write`); ' +
      'the `WWW-Authenticate` header names it. Create a key with that scope in the dashboard: ' +
      'any scope on a test key, the scopes granted to your organisation on a live key.',
    cause:
      'The key is valid but was created without the scope this endpoint needs: `students:read` for ' +
      'progress, the roster and the change feed, `students:write` for enrolling, either for a deletion ' +
      'attestation. A catalog-only key reads the catalog and nothing else. The `WWW-Authenticate` ' +
      'header names the scope missing.',
    fix:
      'Create a key with that scope in the [dashboard](/dashboard) and use it for these calls. A test ' +
      'key may have any scope; a live key only the scopes the operator granted your organisation: if ' +
      'the scope is not offered, apply for it in the dashboard.',
  },
  agreement_required: {
    status: 403,
    title: 'Data-sharing agreement required',
    description:
      "A live key's student endpoints need an active signed data-sharing agreement on the key's organisation, " +
      'recorded by the operator. Sandbox test keys need none.',
    cause:
      "A live key asked for student data, and the key's organisation has no data-sharing agreement in " +
      'force: none was recorded yet, or the last one ended or expired. Test keys and the catalog need ' +
      'no agreement.',
    fix:
      'Use a test key against the sandbox meanwhile. For real students, your organisation signs a ' +
      "data-sharing agreement, which the operator records; the dashboard's overview shows whether one " +
      'is in force and when it ends. After an agreement ends, see [the end of an ' +
      'agreement](/docs#tag-Agreements): you must delete the data you received and may attest it with ' +
      '`POST /api/v1/deletion-attestations`.',
  },
  organisation_suspended: {
    status: 403,
    title: 'Organisation suspended',
    description:
      "The key's organisation is suspended by the operator; all its keys are refused until it is reinstated.",
    cause:
      "The operator suspended the key's organisation. Every key of the organisation is refused, test " +
      'keys included, until the operator reinstates it; nothing about your students is sent meanwhile, ' +
      'webhooks included.',
    fix:
      'Write to the operator: only the operator can reinstate an organisation. Creating new keys does ' +
      'not help, since the suspension applies to the organisation, not to a key.',
  },
  route_not_found: {
    status: 404,
    title: 'Route not found',
    description: 'No endpoint has this path. Every path starts with `/api/v1`; v1 is the only version.',
    cause:
      'No endpoint has this path: a typo, a missing `/api/v1` prefix, a version other than v1, or a ' +
      'lesson slug with more than one slash. Without a key, any unknown path under `/api/v1` answers ' +
      '401 instead, so that paths cannot be explored without one.',
    fix:
      'Compare the path with the [API reference](/docs): every path starts with `/api/v1`, and v1 is ' +
      "the only version. A lesson's slug keeps its one slash " +
      '(`explorer/e1-robots-follow-instructions`).',
  },
  lesson_not_found: {
    status: 404,
    title: 'Lesson not found',
    description: 'No lesson has this slug.',
    cause:
      'The slug has the right form but names no lesson in the current catalog: a typo, or a lesson the ' +
      'operator removed or renamed in a newer catalog.',
    fix:
      'List the lessons (`GET /api/v1/lessons`) and use a `slug` from the list. If you keep slugs, ' +
      'refresh them when a `catalog.published` webhook or a changed `ETag` on the lesson list says the ' +
      'catalog changed.',
  },
  student_not_found: {
    status: 404,
    title: 'Student not found',
    description: "No student with this id is linked to the key's organisation.",
    cause:
      "No student with this id is linked to the key's organisation: the id is wrong, belongs to " +
      'another organisation, was unlinked or erased (you received a `student_unlinked` or ' +
      '`student_deleted` notice), or is a sandbox student asked for with a live key (or a real student ' +
      'with a test key). The answer is the same in every case, so that ids cannot be probed.',
    fix:
      'Take ids from your roster (`GET /api/v1/students`) with a key of the same mode: test keys see ' +
      "the sandbox's students, live keys your real ones. Delete your copy of a student who left, and " +
      'stop asking for them.',
  },
  nothing_to_attest: {
    status: 404,
    title: 'Nothing to attest',
    description:
      "No ended data-sharing agreement of the key's organisation awaits a deletion attestation: none has ended, " +
      'a newer agreement is in force (the data is still shared under it), or `agreementId` names no ended ' +
      "agreement of the organisation. A test key's sandbox has no agreements.",
    cause:
      '`POST /api/v1/deletion-attestations` found no ended agreement of your organisation waiting for ' +
      'an attestation: none has ended, a newer agreement is in force (the data is still shared under ' +
      "it), or `agreementId` names no ended agreement of yours. A test key's sandbox has no " +
      'agreements.',
    fix:
      'Attest only once an agreement has ended, with a live key of the organisation. Leave ' +
      '`agreementId` out to attest the one ended agreement waiting; when several are waiting, the ' +
      'answer to a request without it lists their ids.',
  },
  already_attested: {
    status: 409,
    title: 'Deletion already attested',
    description:
      'The deletion of the data shared under this agreement was attested already, in the dashboard or with a key; ' +
      'an attestation is recorded once. The detail says when.',
    cause:
      'The deletion of the data shared under this agreement was attested already, in the dashboard or ' +
      'with a key. An agreement is attested once; of two attestations sent at once, one succeeds and ' +
      'the other gets this answer.',
    fix:
      'Nothing to do: the first attestation stands. The `detail` says when it was made, and with which ' +
      'key or account.',
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
    cause:
      'The change feed keeps its changes for a set period (90 days unless the operator set another). ' +
      'Your cursor points before changes that were deleted since, so following it would skip them ' +
      'silently: the feed refuses.',
    fix:
      'Resync: take a cursor from now (`GET /api/v1/progress/changes` without `cursor`), list the ' +
      'roster from the start and replace your copy with it, then follow the feed from the cursor you ' +
      'took first. Poll the feed more often than the retention period to avoid this.',
  },
  method_not_allowed: {
    status: 405,
    title: 'Method not allowed',
    description: 'The endpoint exists but not for this method; the `Allow` header lists the methods it accepts.',
    cause:
      'The path exists, but not for this method: a `GET` to enroll, a `POST` to a list, or a `PUT` or ' +
      '`DELETE` to any of them.',
    fix:
      "Use a method the `Allow` header lists; the [API reference](/docs) gives each endpoint's method. " +
      '`HEAD` works wherever `GET` does, and `OPTIONS` answers every path without a key.',
  },
  request_timeout: {
    status: 408,
    title: 'Request Timeout',
    description: 'The request headers or body did not arrive in time (`REQUEST_TIMEOUT_MS`); the connection is closed.',
    cause:
      "The request's headers or body did not arrive within the server's limits (10 and 15 seconds " +
      'unless the operator set others): a stalled connection, a very slow network, or a client that ' +
      'announced a body and did not send it.',
    fix:
      'Send the request again on a new connection; the service closed this one. If it keeps happening, ' +
      'check that your client sends the body it announces in `Content-Length`, and the network between ' +
      'you and the service.',
  },
  payload_too_large: {
    status: 413,
    title: 'Request body too large',
    description: 'The request body exceeds the size limit.',
    cause:
      'The body is larger than the service accepts (4,096 bytes unless the operator set another limit). ' +
      'No endpoint takes more than a few dozen bytes: a body this large is not what the endpoint ' +
      'expects.',
    fix:
      'Send only the fields the endpoint documents: `{"tier": "builder"}` to enroll, `{}` or an ' +
      "`agreementId` to attest. Bulk data reaches the service through the operator's imports, not the " +
      'API.',
  },
  request_header_fields_too_large: {
    status: 431,
    title: 'Request Header Fields Too Large',
    description: 'The request headers exceed the size limit; the connection is closed.',
    cause:
      "The request's headers together are larger than the server accepts (16 KB), usually because of " +
      "large cookies or many custom headers sent to the API's address.",
    fix:
      'Send only the headers the API reads (`Authorization`, `Content-Type`, `If-None-Match`) and leave ' +
      'cookies of other applications out of API calls. The service closed the connection: open a new ' +
      'one.',
  },
  unsupported_media_type: {
    status: 415,
    title: 'Unsupported media type',
    description: 'Request bodies must be JSON, sent with `Content-Type: application/json`.',
    cause:
      'The request has a body whose `Content-Type` is not JSON: a form ' +
      '(`application/x-www-form-urlencoded`, which `curl -d` sends unless told otherwise), ' +
      '`text/plain`, or none at all.',
    fix: 'Send `Content-Type: application/json` with the body (with curl: `-H "Content-Type: ' + 'application/json"`).',
  },
  rate_limited: {
    status: 429,
    title: 'Rate limit exceeded',
    description:
      'The key made as many requests as its limit allows in the rolling window; `Retry-After` says when to retry.',
    cause:
      'The key made as many requests as its limit allows in the rolling window (100 a minute unless the ' +
      "operator set another), or all of its organisation's keys together did (300 a minute); the " +
      '`detail` says which. Every request with a valid key counts, whatever its answer, except those ' +
      'refused with 429.',
    fix:
      "Wait as `Retry-After` says (seconds), then go on. Pace requests by the `RateLimit` header's `r` " +
      '(requests left) and `t` (seconds until one more), or `X-RateLimit-Remaining`. More keys do not ' +
      "raise the organisation's limit; to keep a copy of many students, page the roster and follow the " +
      'change feed instead of reading each student.',
  },
  too_many_failed_authentications: {
    status: 429,
    title: 'Too many failed authentications',
    description:
      'Too many requests from this address carried a missing or wrong key; `Retry-After` says when to retry.',
    cause:
      'Too many requests from your address carried a missing, malformed, expired, revoked or unknown ' +
      'key in one window (30 unless the operator set another), so every request from the address is ' +
      'refused until the window has room, good keys included.',
    fix:
      'Wait as `Retry-After` says. Then find the client sending the bad key (each of its requests got a ' +
      '401 first) and fix its key before it sends again; retrying a 401 in a loop keeps the address ' +
      'blocked.',
  },
  internal_error: {
    status: 500,
    title: 'Internal error',
    description: 'Something failed on our side. The `requestId` lets the operator find it in the logs.',
    cause:
      "Something failed on the service's side. The body says nothing of the cause on purpose; the log " +
      'line with the same `requestId` does.',
    fix:
      'Retry later, with backoff; a `POST /enroll` may be retried safely (setting the same tier again ' +
      'changes nothing). If it persists, send the operator the `requestId` and the time of the request.',
  },
  storage_unavailable: {
    status: 503,
    title: 'Storage unavailable',
    description: 'The database could not be reached in time; `Retry-After` says when to retry.',
    cause:
      'The database did not answer in time: it is restarting, overloaded, full, or unreachable from ' +
      'this instance.',
    fix:
      'Wait as `Retry-After` says and send the request again. Retrying is safe: enrolling into the tier ' +
      'already set changes nothing, and an attestation already recorded answers 409. Catalog reads keep ' +
      'working meanwhile for keys the instance already knows.',
  },
  not_ready: {
    status: 503,
    title: 'Not ready',
    description:
      'Only `GET /readyz` answers it: this instance cannot serve yet, because the database does not list ' +
      'exactly the migrations its code knows; `checks` names the failing check. A load balancer sends ' +
      'requests to other instances meanwhile.',
    cause:
      'Only `GET /readyz` answers it: this instance cannot serve yet, usually during an upgrade, ' +
      'because the database does not list exactly the migrations its code knows; `checks` names the ' +
      'failing check.',
    fix:
      'Partners need do nothing: a load balancer sends requests to ready instances. Operators: see ' +
      '`checks`, and finish the upgrade (`curriculum migrate`) or roll the instance back.',
  },
} as const satisfies Record<string, CatalogEntry>

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
