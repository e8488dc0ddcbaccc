/**
 * Checks real responses against the served OpenAPI document: the status must be one the
 * operation declares, the content type the declared one, and the body must validate against
 * the declared schema (JSON Schema 2020-12, as OpenAPI 3.1 uses).
 */
import { Ajv2020 } from 'ajv/dist/2020.js'
import formats from 'ajv-formats'
import { expect } from 'vitest'

// biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document is read as loose JSON, field by field
type Json = Record<string, any>

/** What is checked of a response: node:http's, or Fastify inject's. */
export interface CheckedResponse {
  statusCode: number
  headers: Record<string, string | string[] | number | undefined>
  body: string
}

export class Contract {
  readonly doc: Json
  readonly #ajv: Ajv2020
  readonly #validators = new Map<string, ReturnType<Ajv2020['compile']>>()

  constructor(doc: Json) {
    this.doc = doc
    this.#ajv = new Ajv2020({ strict: false, allErrors: true })
    // ajv-formats is CommonJS; under NodeNext its function is the default export's default.
    ;(formats as unknown as { default: (ajv: Ajv2020) => void }).default(this.#ajv)
    this.#ajv.addSchema(doc, 'openapi.json')
  }

  /** Asserts an error response is problem+json matching the Problem schema, with a request id that matches the header. */
  checkProblem(response: CheckedResponse): Json {
    expect(String(response.headers['content-type'])).toMatch(/^application\/problem\+json/)
    const validate = this.#compile(['components', 'schemas', 'Problem'])
    const body = JSON.parse(response.body)
    expect(validate(body), `problem body: ${this.#ajv.errorsText(validate.errors)}\n${response.body}`).toBe(true)
    expect(body.status).toBe(response.statusCode)
    expect(body.requestId).toBe(response.headers['x-request-id'])
    expect(body.type).toBe(`/docs/errors#${body.code}`)
    return body
  }

  /** Asserts the response is one the document allows for `method path` (path as in the document). */
  check(method: string, path: string, response: CheckedResponse): void {
    const operation = this.doc.paths?.[path]?.[method.toLowerCase()]
    expect(operation, `${method} ${path} is documented`).toBeDefined()
    const status = String(response.statusCode)
    const declared = operation.responses?.[status]
    expect(declared, `${method} ${path} documents status ${status}`).toBeDefined()
    const content = declared.content as Json | undefined
    if (content === undefined) {
      expect(response.body, `${status} has no body`).toBe('')
      return
    }
    const mediaType = String(response.headers['content-type'] ?? '')
      .split(';')[0]!
      .trim()
    expect(Object.keys(content), `${method} ${path} ${status} content type`).toContain(mediaType)
    const validate = this.#compile([
      'paths',
      path,
      method.toLowerCase(),
      'responses',
      status,
      'content',
      mediaType,
      'schema',
    ])
    const body = JSON.parse(response.body)
    const valid = validate(body)
    expect(
      valid,
      `${method} ${path} ${status} body matches the document: ${this.#ajv.errorsText(validate.errors)}\n${response.body}`,
    ).toBe(true)
    if (response.statusCode >= 400) this.checkProblem(response)
    for (const [name, header] of Object.entries((declared.headers ?? {}) as Json)) {
      if (header.required === true) expect(response.headers[name.toLowerCase()], `header ${name}`).toBeDefined()
    }
  }

  /**
   * Asserts a webhook delivery is one the `webhooks` section declares for its event: the body
   * validates against the declared schema, the content type is the declared one, and every
   * declared header is there and matches its schema. Returns the event.
   */
  checkDelivery(delivery: Delivery): string {
    const body = JSON.parse(delivery.body)
    const event = String(body.type)
    const operation = this.doc.webhooks?.[event]?.post
    expect(operation, `${event} is declared in the webhooks section`).toBeDefined()
    expect(Object.keys(operation.requestBody.content)).toEqual([String(delivery.headers['content-type'])])
    const validate = this.#compile(['webhooks', event, 'post', 'requestBody', 'content', 'application/json', 'schema'])
    expect(validate(body), `${event} body: ${this.#ajv.errorsText(validate.errors)}\n${delivery.body}`).toBe(true)
    for (const [i, parameter] of (operation.parameters as Json[]).entries()) {
      expect(parameter.in).toBe('header')
      const value = delivery.headers[String(parameter.name).toLowerCase()]
      if (value === undefined) {
        expect(parameter.required, `${event}: header ${parameter.name} is optional`).not.toBe(true)
        continue
      }
      const check = this.#compile(['webhooks', event, 'post', 'parameters', String(i), 'schema'])
      expect(check(value), `${event} ${parameter.name}: ${this.#ajv.errorsText(check.errors)}: ${value}`).toBe(true)
    }
    return event
  }

  /** A validator of the schema at `parts` (a path into the document), compiled once. */
  #compile(parts: readonly string[]): ReturnType<Ajv2020['compile']> {
    const ref = `openapi.json#/${parts.map((part) => part.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`
    let validate = this.#validators.get(ref)
    if (validate === undefined) {
      validate = this.#ajv.compile({ $ref: ref })
      this.#validators.set(ref, validate)
    }
    return validate
  }
}

/** What a webhook receiver got: the headers (names in lower case) and the raw body. */
export interface Delivery {
  headers: Record<string, string | string[] | undefined>
  body: string
}

/** The documented path template an actual URL belongs to, or undefined when none does. */
export function documentedPath(url: string): string | undefined {
  const path = url.split('?')[0]!
  if (
    [
      '/api/v1/tiers',
      '/api/v1/lessons',
      '/api/v1/students',
      '/api/v1/progress/changes',
      '/api/v1/deletion-attestations',
      '/.well-known/curriculum-signing-keys',
      '/healthz',
      '/livez',
      '/readyz',
    ].includes(path)
  )
    return path
  if (/^\/api\/v1\/lessons\/.+/.test(path)) return '/api/v1/lessons/{slug}'
  if (/^\/api\/v1\/students\/[^/]+\/progress$/.test(path)) return '/api/v1/students/{id}/progress'
  if (/^\/api\/v1\/students\/[^/]+\/enroll$/.test(path)) return '/api/v1/students/{id}/enroll'
  return undefined
}
