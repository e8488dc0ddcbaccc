/**
 * What the span redaction keeps and drops: a trace carries no query string, no recorded header
 * and no path of a partner's webhook URL, whatever the HTTP instrumentation records.
 */
import { describe, expect, it } from 'vitest'
import { redactAttributes } from '../../src/observability/tracing-redaction.js'

describe('span redaction', () => {
  it('keeps the path of a request to the service and drops its query and headers', () => {
    const kept = redactAttributes(
      {
        'http.request.method': 'GET',
        'url.path': '/api/v1/students/6b0df569-54e5-4809-b280-3a4d49149ca7/changes',
        'url.query': 'cursor=abc&name=Ada',
        'http.target': '/api/v1/lessons?tier=builder',
        'http.url': 'http://127.0.0.1:3000/api/v1/lessons?tier=builder',
        'http.request.header.authorization': ['Bearer cur_live_secret'],
        'http.response.header.set-cookie': ['session=1'],
        'http.response.status_code': 200,
      },
      false,
    )
    expect(kept).toEqual({
      'http.request.method': 'GET',
      'url.path': '/api/v1/students/6b0df569-54e5-4809-b280-3a4d49149ca7/changes',
      'http.target': '/api/v1/lessons',
      'http.url': 'http://127.0.0.1:3000/api/v1/lessons',
      'http.response.status_code': 200,
    })
  })

  it("keeps only the origin of an outgoing request's URL", () => {
    const kept = redactAttributes(
      {
        'url.full': 'https://hooks.example.org/services/T000/B000/secret-token?x=1',
        'url.path': '/services/T000/B000/secret-token',
        'http.target': '/services/T000/B000/secret-token',
        'server.address': 'hooks.example.org',
      },
      true,
    )
    expect(kept).toEqual({ 'url.full': 'https://hooks.example.org', 'server.address': 'hooks.example.org' })
  })
})
