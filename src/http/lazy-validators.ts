/**
 * Request validators compiled when a route first validates a request, not when the app starts.
 *
 * Fastify compiles an Ajv validator for every route at start (a visible part of the start with
 * the dashboard's forms, the larger part of it Ajv compiling its own meta-schema; figures:
 * docs/performance.md), and most routes of a given process never validate anything: the
 * catalog answers come from the fast path. So the builder hands Fastify a stand-in per route
 * that compiles the real validator (with the same Ajv compiler and options Fastify would use)
 * on its first call.
 *
 * A custom builder makes Fastify pass header schemas as written instead of lower-casing their
 * property names; every header schema here is written in lower case, as Node delivers headers.
 */
import { createRequire } from 'node:module'
import type { FastifyServerOptions } from 'fastify'

interface RouteSchema {
  schema: unknown
  method: string
  url: string
  httpPart: string
}
type Validate = ((data: unknown) => unknown) & { errors?: unknown }
type ValidatorBuilder = (externalSchemas: unknown, ajvOptions: unknown) => (route: RouteSchema) => Validate

/** Fastify's own default, `@fastify/ajv-compiler`, resolved from Fastify and loaded on first use. */
function fastifyDefaultBuilder(): ValidatorBuilder {
  const fastifyRequire = createRequire(createRequire(import.meta.url).resolve('fastify'))
  const selectValidator = fastifyRequire('@fastify/ajv-compiler') as () => ValidatorBuilder
  return selectValidator()
}

let defaultBuilder: ValidatorBuilder | undefined

type FastifyValidatorBuilder = NonNullable<
  NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildValidator']
>

/** For Fastify's `schemaController.compilersFactory.buildValidator`. */
export const buildLazyValidator = lazyValidatorBuilder as unknown as FastifyValidatorBuilder

function lazyValidatorBuilder(externalSchemas: unknown, ajvOptions: unknown): (route: RouteSchema) => Validate {
  let compiler: ((route: RouteSchema) => Validate) | undefined
  return (route) => {
    let validate: Validate | undefined
    const standIn: Validate = (data) => {
      if (validate === undefined) {
        defaultBuilder ??= fastifyDefaultBuilder()
        compiler ??= defaultBuilder(externalSchemas, ajvOptions)
        validate = compiler(route)
      }
      const result = validate(data)
      // Fastify reads the errors of a failed validation from the function it called.
      standIn.errors = validate.errors
      return result
    }
    return standIn
  }
}
