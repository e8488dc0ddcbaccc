/**
 * The requests behind a score, against a plain server on 127.0.0.1: the client assertion's claims
 * (the token audience when a registration has one), what a token answer must hold, the first 1 KB
 * of an answer kept, and the token cache: one request for attempts at once, kept until a minute
 * before expiry, dropped when refused, failures not kept.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { decodeJwt, decodeProtectedHeader, importJWK, jwtVerify } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ManualClock } from '../../src/clock.js'
import { SCORE_MEDIA_TYPE } from '../../src/domain/lti-claims.js'
import { MAX_ANSWER_KEPT } from '../../src/domain/lti-score.js'
import { newToolKeyText, toolKeyFrom } from '../../src/domain/lti-tool-key.js'
import { AccessTokens, keptUntil, TOKEN_MARGIN_MS } from '../../src/platforms/access-tokens.js'
import { postScore, requestAccessToken, type TokenAnswer } from '../../src/platforms/ags-client.js'
import { CLIENT_ASSERTION_TYPE } from '../../src/platforms/client-assertion.js'

describe('the token and score requests', () => {
  const key = toolKeyFrom(newToolKeyText())
  const received: { url: string; headers: http.IncomingHttpHeaders; body: string }[] = []
  let answer: { status: number; body: string } = { status: 200, body: '{}' }
  let base = ''
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      received.push({ url: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks).toString() })
      response.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body)
    })
  })
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  })
  const settings = { timeoutMs: 2000, allowLoopback: true }
  const now = Date.parse('2026-03-02T09:00:00.000Z')

  it('asks for a token with an RS256 assertion for the token audience, and reads a bearer token', async () => {
    answer = { status: 200, body: JSON.stringify({ access_token: 'tok', token_type: 'bearer', expires_in: 600 }) }
    const endpoint = {
      tokenUrl: `${base}/token`,
      tokenAudience: 'https://auth.platform.example',
      clientId: 'client-7',
      scope: 'a b',
    }
    expect(await requestAccessToken(endpoint, key, now, settings)).toEqual({ ok: true, token: 'tok', expiresInS: 600 })
    const form = new URLSearchParams(received.at(-1)!.body)
    expect(received.at(-1)!.headers['content-type']).toBe('application/x-www-form-urlencoded')
    expect(form.get('grant_type')).toBe('client_credentials')
    expect(form.get('client_assertion_type')).toBe(CLIENT_ASSERTION_TYPE)
    expect(form.get('scope')).toBe('a b')
    const assertion = form.get('client_assertion')!
    expect(decodeProtectedHeader(assertion)).toMatchObject({ alg: 'RS256', kid: key.publicJwk.kid })
    const { payload } = await jwtVerify(assertion, await importJWK(key.publicJwk, 'RS256'), {
      currentDate: new Date(now),
      audience: 'https://auth.platform.example',
      issuer: 'client-7',
      subject: 'client-7',
    })
    expect(payload.exp! - payload.iat!).toBe(300)
    expect(payload.iat).toBe(now / 1000)
    // Each assertion is its own.
    await requestAccessToken(endpoint, key, now, settings)
    const again = decodeJwt(new URLSearchParams(received.at(-1)!.body).get('client_assertion')!)
    expect(again.jti).not.toBe(payload.jti)

    // Without a token audience, the token URL is the audience.
    await requestAccessToken({ ...endpoint, tokenAudience: null }, key, now, settings)
    expect(decodeJwt(new URLSearchParams(received.at(-1)!.body).get('client_assertion')!).aud).toBe(`${base}/token`)
  })

  it('refuses a token answer that is not a bearer token, and keeps the first 1 KB of an error', async () => {
    const endpoint = { tokenUrl: `${base}/token`, tokenAudience: null, clientId: 'c', scope: 's' }
    for (const body of ['{"access_token":"x","token_type":"mac"}', '{"token_type":"Bearer"}', 'not json', '[]']) {
      answer = { status: 200, body }
      expect(await requestAccessToken(endpoint, key, now, settings), body).toMatchObject({ ok: false, status: 200 })
    }
    answer = { status: 400, body: JSON.stringify({ error: 'invalid_client', pad: 'x'.repeat(3000) }) }
    const refused = await requestAccessToken(endpoint, key, now, settings)
    expect(refused).toMatchObject({ ok: false, status: 400, error: 'the token endpoint answered 400' })
    expect((refused as { response: string }).response).toHaveLength(MAX_ANSWER_KEPT)
  })

  it('posts a score to the line item’s scores, its query kept, with the media type and the token', async () => {
    answer = { status: 422, body: 'y'.repeat(5000) }
    const reply = await postScore(`${base}/lineitems/9?type_id=3`, 'tok', '{"userId":"u"}', settings)
    expect(reply).toEqual({ status: 422, error: null, response: 'y'.repeat(MAX_ANSWER_KEPT) })
    expect(received.at(-1)).toMatchObject({
      url: '/lineitems/9/scores?type_id=3',
      body: '{"userId":"u"}',
      headers: { 'content-type': SCORE_MEDIA_TYPE, authorization: 'Bearer tok' },
    })
    // A platform the rules refuse is no answer, and nothing is sent.
    const before = received.length
    expect(await postScore(`${base}/lineitems/9`, 'tok', '{}', { ...settings, allowLoopback: false })).toMatchObject({
      status: null,
      error: expect.stringMatching(/^refused/),
    })
    expect(received).toHaveLength(before)
  })
})

describe('the token cache', () => {
  const endpoint = { tokenUrl: 'https://lms.example/token', tokenAudience: null, clientId: 'c', scope: 's' }

  function cache(answers: TokenAnswer[]) {
    const clock = new ManualClock('2026-03-02T09:00:00.000Z')
    let asked = 0
    const tokens = new AccessTokens(
      async () => answers[asked++] ?? { ok: true, token: `t${asked}`, expiresInS: 3600 },
      clock,
    )
    return { tokens, clock, asked: () => asked }
  }

  it('makes one request for attempts at once and keeps the token until a minute before it expires', async () => {
    const { tokens, clock, asked } = cache([])
    const got = await Promise.all([1, 2, 3].map(() => tokens.get('reg-1', endpoint)))
    expect(got.map((token) => token.ok && token.token)).toEqual(['t1', 't1', 't1'])
    expect(asked()).toBe(1)
    clock.advance(3600_000 - TOKEN_MARGIN_MS - 1)
    expect(await tokens.get('reg-1', endpoint)).toEqual({ ok: true, token: 't1' })
    clock.advance(1)
    expect(await tokens.get('reg-1', endpoint)).toEqual({ ok: true, token: 't2' })
    // Another registration, or the same one with another endpoint, has its own.
    expect(await tokens.get('reg-2', endpoint)).toEqual({ ok: true, token: 't3' })
    expect(await tokens.get('reg-2', { ...endpoint, scope: 's t' })).toEqual({ ok: true, token: 't4' })
  })

  it('drops a refused token only if it is still the kept one, and keeps no failure', async () => {
    const failure = { ok: false as const, status: 503, error: 'down', response: '' }
    const { tokens, asked } = cache([failure])
    expect(await tokens.get('reg-1', endpoint)).toEqual(failure)
    expect(await tokens.get('reg-1', endpoint)).toEqual({ ok: true, token: 't2' })
    await tokens.drop('reg-1', 'some older token')
    expect(await tokens.get('reg-1', endpoint)).toEqual({ ok: true, token: 't2' })
    await tokens.drop('reg-1', 't2')
    expect(await tokens.get('reg-1', endpoint)).toEqual({ ok: true, token: 't3' })
    expect(asked()).toBe(3)
  })

  it('keeps a short-lived token half its life, and one of unstated life five minutes less the margin', () => {
    expect(keptUntil(0, 60)).toBe(30_000)
    expect(keptUntil(0, undefined)).toBe(300_000 - TOKEN_MARGIN_MS)
  })
})
