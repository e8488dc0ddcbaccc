/**
 * Every failure becomes an RFC 9457 problem+json response here and nowhere else: thrown
 * ProblemErrors, schema validation failures, Fastify's own body-parsing errors, unknown routes,
 * storage outages and bugs. A 5xx never carries an internal message.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import {
  type FieldProblem,
  type Problem,
  PROBLEM_CATALOG,
  ProblemError,
  type ProblemLocation,
  problemType,
} from '../errors.js'
import { isStorageUnavailable } from '../storage/connection.js'
import { recordProblem } from '../instrumentation/metrics-channels.js'
import { StorageFailureLog } from './storage-failure-log.js'
import type { ProblemBody } from './schemas/common.js'

export const PROBLEM_CONTENT_TYPE = 'application/problem+json'

declare module 'fastify' {
  interface FastifyReply {
    /** The code of the problem this reply sent, for the request log; null for any other answer. */
    problemCode: string | null
  }
}

/** Seconds a client should wait before retrying after a storage outage. */
const STORAGE_RETRY_AFTER_SECONDS = 2

/**
 * Sends a problem. Hot refusals (401, 429) pass a plain Problem object rather than throwing:
 * an Error collects a stack trace, which costs more than the rest of such a request.
 */
export function sendProblem(request: FastifyRequest, reply: FastifyReply, problem: Problem): FastifyReply {
  const status = PROBLEM_CATALOG[problem.code].status
  reply.code(status)
  reply.problemCode = problem.code
  recordProblem(problem.code, status)
  if (problem.headers !== undefined) for (const name in problem.headers) reply.header(name, problem.headers[name])
  return reply.type(PROBLEM_CONTENT_TYPE).send(problemJson(problem, request.id))
}

/**
 * Each problem object's body up to its request id. The hot refusals reuse their Problem objects
 * (admission.ts), so a 401 or 429 costs one string join instead of a JSON.stringify.
 */
const bodyPrefixes = new WeakMap<Problem, string>()

/** The problem+json body of `problem` up to its request id's value (for the fast path's bytes too). */
export function problemPrefix(problem: Problem): string {
  let prefix = bodyPrefixes.get(problem)
  if (prefix === undefined) {
    const body = JSON.stringify(problemBody(problem, ''))
    // Everything before the request id's value: the body ends with "requestId":"" and }.
    prefix = body.slice(0, body.length - '""}'.length)
    bodyPrefixes.set(problem, prefix)
  }
  return prefix
}

/** The problem+json body of a problem answered to the request `requestId`. */
export function problemJson(problem: Problem, requestId: string): string {
  if (problem.errors !== undefined || problem.extensions !== undefined)
    return JSON.stringify({
      ...problemBody(problem, requestId),
      ...(problem.errors === undefined ? {} : { errors: [...problem.errors] }),
      ...problem.extensions,
    })
  return `${problemPrefix(problem)}${JSON.stringify(requestId)}}`
}

function problemBody(problem: Problem, requestId: string): ProblemBody {
  const { status, title } = PROBLEM_CATALOG[problem.code]
  return { type: problemType(problem.code), title, status, detail: problem.detail, code: problem.code, requestId }
}

interface AjvError {
  keyword: string
  instancePath: string
  params: Record<string, unknown>
  message?: string
  parentSchema?: { enum?: unknown[]; format?: string }
}

const LOCATIONS: Record<string, ProblemLocation> = {
  body: 'body',
  querystring: 'query',
  params: 'path',
  headers: 'header',
}

function describe(error: AjvError, location: ProblemLocation): { field: string; detail: string } {
  const pointer = error.instancePath
  const name = location === 'body' ? pointer : pointer.replace(/^\//, '')
  switch (error.keyword) {
    case 'required': {
      const missing = String(error.params.missingProperty)
      return location === 'body'
        ? { field: `${pointer}/${missing}`, detail: `missing required field "${missing}"` }
        : { field: missing, detail: `missing required ${location} parameter "${missing}"` }
    }
    case 'additionalProperties': {
      const extra = String(error.params.additionalProperty)
      return location === 'body'
        ? { field: `${pointer}/${extra}`, detail: `unknown field "${extra}"` }
        : { field: extra, detail: `unknown ${location} parameter "${extra}"` }
    }
    case 'enum':
      return { field: name, detail: `must be one of: ${(error.params.allowedValues as unknown[]).join(', ')}` }
    case 'type': {
      const type = String(error.params.type)
      const expected =
        type === 'object'
          ? 'a JSON object'
          : type === 'array'
            ? 'a JSON array'
            : type === 'integer'
              ? 'an integer'
              : `a ${type}`
      return {
        field: name,
        detail: `must be ${expected}${location === 'query' && type === 'string' ? ' (give the parameter once)' : ''}`,
      }
    }
    case 'format':
      return error.params.format === 'uuid'
        ? { field: name, detail: 'must be a UUID such as 0b6d9a3e-3f1c-4d57-9a0e-2a7c5c1e8f42' }
        : { field: name, detail: `must be a valid ${String(error.params.format)}` }
    default:
      return { field: name, detail: error.message ?? 'is invalid' }
  }
}

/** At most this many field problems in one answer: thousands of unknown query parameters must not make a huge body. */
export const MAX_FIELD_PROBLEMS = 20

/** Turns Ajv's errors into the `errors` list of an invalid_request problem (the first 20, and how many there were). */
export function schemaErrorFormatter(errors: unknown[], dataVar: string): Error {
  const location = LOCATIONS[dataVar] ?? 'body'
  const problems: FieldProblem[] = []
  const seen = new Set<string>()
  for (const error of errors as AjvError[]) {
    const { field, detail } = describe(error, location)
    const id = `${field}\u0000${detail}`
    if (seen.has(id)) continue
    seen.add(id)
    problems.push({ in: location, field, detail })
  }
  const shown = problems.slice(0, MAX_FIELD_PROBLEMS)
  const summary = shown.map((p) => `${p.in} ${p.field === '' ? 'body' : p.field.slice(0, 100)}: ${p.detail}`).join('; ')
  const more =
    problems.length > shown.length
      ? ` (the first ${shown.length} of ${problems.length} problems; errors lists the same ${shown.length})`
      : ''
  return new ProblemError('invalid_request', `The request is invalid: ${summary}${more}.`, { errors: shown })
}

/** Maps Fastify's own client errors (body parsing, limits) onto the catalog. */
function fromFastifyError(error: FastifyError, request: FastifyRequest, bodyLimit: number): ProblemError | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ProblemError(
        'unsupported_media_type',
        'Send the body as JSON with Content-Type: application/json ' +
          `(got ${request.headers['content-type'] ?? 'no Content-Type'}).`,
      )
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ProblemError('invalid_request', 'The Content-Length header does not match the body.')
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ProblemError('payload_too_large', `The request body must be at most ${bodyLimit} bytes.`)
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ProblemError(
        'malformed_json',
        'Content-Type is application/json but the body is empty; send a JSON object.',
      )
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ProblemError('malformed_json', 'The body is not valid JSON.')
  }
  if (error.statusCode === 400 && error instanceof SyntaxError) {
    return new ProblemError('malformed_json', `The body is not valid JSON: ${error.message}.`)
  }
  if (error.statusCode === 413)
    return new ProblemError('payload_too_large', `The request body must be at most ${bodyLimit} bytes.`)
  if (error.statusCode === 415)
    return new ProblemError('unsupported_media_type', 'Send the body as JSON with Content-Type: application/json.')
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
    return new ProblemError('invalid_request', error.message)
  }
  return undefined
}

export function installProblemResponses(app: FastifyInstance, options: { bodyLimit: number }): void {
  const storageFailures = new StorageFailureLog()
  app.decorateReply('problemCode', null)
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof ProblemError) {
      if (error.status >= 500) request.log.error({ err: error.cause ?? error }, error.detail)
      return sendProblem(request, reply, error)
    }
    const client = fromFastifyError(error, request, options.bodyLimit)
    if (client !== undefined) return sendProblem(request, reply, client)
    if (isStorageUnavailable(error)) {
      storageFailures.report(request.log, error)
      return sendProblem(
        request,
        reply,
        new ProblemError(
          'storage_unavailable',
          `Storage is unavailable; retry in ${STORAGE_RETRY_AFTER_SECONDS} seconds.`,
          {
            headers: { 'retry-after': String(STORAGE_RETRY_AFTER_SECONDS) },
          },
        ),
      )
    }
    request.log.error({ err: error }, 'unhandled error')
    return sendProblem(
      request,
      reply,
      new ProblemError(
        'internal_error',
        `Something failed on our side. Quote request id ${request.id} to the operator.`,
      ),
    )
  })

  app.setNotFoundHandler((request, reply) => sendProblem(request, reply, notFoundProblem(request)))
}

/** The 404 for a path no route has (the /api/v1 plugin answers it after authentication). */
export function notFoundProblem(request: FastifyRequest): Problem {
  const path = (request.url.split('?')[0] ?? '').slice(0, 200)
  const detail = /^\/api\/(?!v1(\/|$))/.test(path)
    ? `No endpoint has the path ${path}. v1 is the only API version: paths start with /api/v1.`
    : `No endpoint has the path ${path}. The API reference is at /docs.`
  return { code: 'route_not_found', detail }
}
