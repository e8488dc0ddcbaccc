/**
 * Success bodies keep a serializer compiled from their schema (which writes only the declared
 * fields); error statuses, whose bodies are sent as ready JSON text, get plain JSON.
 */
import { describe, expect, it } from 'vitest'
import { buildResponseSerializer } from '../../src/http/response-serializers.js'

const Tier = { $id: 'Tier', type: 'object', properties: { id: { type: 'string' } }, required: ['id'] }
const compile = buildResponseSerializer({ Tier })

describe('response serializers', () => {
  it('compiles success bodies from their schema, references included', () => {
    const serialize = compile({
      method: 'GET',
      url: '/t',
      httpStatus: '200',
      schema: { type: 'object', properties: { tiers: { type: 'array', items: { $ref: 'Tier#' } } } },
    })
    expect(serialize({ tiers: [{ id: 'explorer', secret: 'not declared' }], extra: 1 })).toBe(
      '{"tiers":[{"id":"explorer"}]}',
    )
  })

  it('compiles a shared schema used as a route body itself', () => {
    const serialize = compile({ method: 'GET', url: '/t', httpStatus: '200', schema: Tier })
    expect(serialize({ id: 'builder', other: true })).toBe('{"id":"builder"}')
  })

  it('writes error bodies as plain JSON, compiling nothing', () => {
    for (const httpStatus of ['401', '429', '503', '4xx', 'default']) {
      const serialize = compile({ method: 'GET', url: '/t', httpStatus, schema: { type: 'object', properties: {} } })
      expect(serialize({ code: 'x', detail: 'kept' })).toBe('{"code":"x","detail":"kept"}')
    }
  })
})
