/**
 * What the examples generator takes from an operation of the OpenAPI document, and how it writes
 * values a reader fills in. That every generated example runs is examples-as-pasted.test.ts's job.
 */
import { describe, expect, it } from 'vitest'
import { codeExamples, exampleRequest } from '../../src/http/code-examples.js'

const doc = {
  security: [{ bearerAuth: [] }],
  components: { schemas: { Enroll: { type: 'object', examples: [{ tier: 'builder', note: "it's", on: true }] } } },
}

const enroll = {
  parameters: [{ in: 'path', name: 'id', required: true, schema: { type: 'string' } }],
  requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Enroll' } } } },
  responses: { 200: { description: 'ok', content: { 'application/json': {} } } },
}

const roster = {
  parameters: [
    { in: 'query', name: 'limit', schema: { type: 'integer', default: 100 }, example: 500 },
    { in: 'query', name: 'cursor', schema: { type: 'string' }, example: 'AbC' },
    { in: 'query', name: 'tier', schema: { type: 'string' } },
    { in: 'header', name: 'if-none-match', schema: { type: 'string' }, example: '"x"' },
  ],
  responses: { 200: { description: 'ok', content: { 'application/json': {} } } },
}

describe('code examples', () => {
  it("fills a student's id from STUDENT_ID, other path parameters from their example, and the body from the schema's", () => {
    const request = exampleRequest(doc, 'post', '/api/v1/students/{id}/enroll', enroll)
    const code = codeExamples(request)
    expect(code.curl).toBe(
      [
        'curl -X POST "$BASE_URL/api/v1/students/$STUDENT_ID/enroll" \\',
        '  -H "Authorization: Bearer $API_KEY" \\',
        '  -H "Content-Type: application/json" \\',
        `  -d '{"tier":"builder","note":"it'\\''s","on":true}'`,
      ].join('\n'),
    )
    expect(code.javascript).toContain('const { BASE_URL, API_KEY, STUDENT_ID } = process.env')
    expect(code.javascript).toContain("body: JSON.stringify({ tier: 'builder', note: 'it\\'s', on: true }),")
    expect(code.python).toContain('json={"tier": "builder", "note": "it\'s", "on": True},')
    expect(code['python-urllib']).toContain('STUDENT_ID = os.environ["STUDENT_ID"]')

    const lesson = { parameters: [{ in: 'path', name: 'slug', example: 'explorer/e1-x' }], responses: {} }
    expect(codeExamples(exampleRequest(doc, 'get', '/api/v1/lessons/{slug}', lesson)).curl).toContain(
      '"$BASE_URL/api/v1/lessons/explorer/e1-x"',
    )
    expect(() => exampleRequest(doc, 'get', '/x/{name}', { responses: {} })).toThrow(/name has no example/)
  })

  it('shows a query setting changed from its default, never a cursor, a filter or a header', () => {
    const code = codeExamples(exampleRequest(doc, 'get', '/api/v1/students', roster))
    expect(code.curl).toMatch(/^curl "\$BASE_URL\/api\/v1\/students\?limit=500" \\$/m)
    expect(code.python).toContain('params={"limit": 500},')
    expect(code['python-urllib']).toContain('f"{BASE_URL}/api/v1/students?limit=500"')
    for (const text of Object.values(code)) expect(text).not.toMatch(/cursor|tier|If-None-Match/i)
  })

  it('sends no key where the operation needs none, and says what an example answers when it shows one', () => {
    const probe = { security: [], responses: { 200: { description: 'ok' } }, 'x-example-answer': 'HTTP/1.1 404' }
    const code = codeExamples(exampleRequest(doc, 'get', '/livez', probe))
    for (const text of Object.values(code)) expect(text).not.toMatch(/API_KEY|Authorization/)
    expect(code.curl).toBe('curl "$BASE_URL/livez"\n# HTTP/1.1 404')
    expect(code.javascript).toContain('console.log(response.status)\n// HTTP/1.1 404')
    expect(code['python-urllib']).not.toContain('import json')
  })

  it("writes a signed-in partner's values in, escaped for each language", () => {
    const values = { baseUrl: 'https://api.example.org', apiKey: 'cur_test_A1', studentId: "a'b{c}" }
    const code = codeExamples(exampleRequest(doc, 'post', '/api/v1/students/{id}/enroll', enroll), values)
    expect(code.curl).toContain(`"https://api.example.org/api/v1/students/a'b{c}/enroll"`)
    expect(code.curl).toContain('Bearer cur_test_A1')
    expect(code.javascript).toContain("const STUDENT_ID = 'a\\'b{c}'")
    expect(code.javascript).not.toContain('process.env')
    expect(code.python).toContain('BASE_URL = "https://api.example.org"')
    expect(code.python).toContain('STUDENT_ID = "a\'b{c}"')
    expect(code.python).not.toContain('import os')
  })
})
