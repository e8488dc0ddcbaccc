/**
 * Query parameters declared as integers. Validation does not coerce types (a body's `"3"` must
 * stay a string error), but every query value arrives as text; this hook turns a plain decimal
 * into a number just before validation, so the schema (and the OpenAPI document) can say
 * `integer` with its bounds, and anything else (`1e3`, `5.0`, an empty value, a repeated
 * parameter) still fails validation with the parameter's name.
 */
import type { FastifyRequest } from 'fastify'

const DECIMAL = /^[0-9]{1,9}$/

export function integerQuery(...names: string[]) {
  return async function coerceIntegers(request: FastifyRequest): Promise<void> {
    const query = request.query as Record<string, unknown>
    for (const name of names) {
      const value = query[name]
      if (typeof value === 'string' && DECIMAL.test(value)) query[name] = Number(value)
    }
  }
}
