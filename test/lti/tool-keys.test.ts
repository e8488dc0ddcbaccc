/**
 * The tool's LTI key: one RSA key for every instance sharing the database, published at /lti/jwks
 * with its kid and never its private half; a rotation keeps the retired key published for a week.
 */
import { createPublicKey, verify } from 'node:crypto'
import { SignJWT, importJWK, jwtVerify } from 'jose'
import { afterEach, describe, expect, it } from 'vitest'
import { RETIRED_KEY_DAYS, loadToolKey, rotateToolKey } from '../../src/cases/lti-tool-key.js'
import { toolKeys } from '../../src/services/lti-tool-keys.js'
import { listAudit } from '../../src/storage/audit-repository.js'
import { type TestContext, buildTestApp } from '../helper.js'

const DAY = 86_400_000

describe('the tool key set at /lti/jwks', () => {
  let t: TestContext
  afterEach(async () => {
    await t?.close()
  })

  it('publishes one RS256 key by its kid, without any private member, and signs with it', async () => {
    t = await buildTestApp()
    const response = await t.send({ url: '/lti/jwks' })
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toContain('application/jwk-set+json')
    const { keys } = response.json() as { keys: Record<string, string>[] }
    expect(keys).toHaveLength(1)
    expect(keys[0]).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig', e: 'AQAB' })
    for (const member of ['d', 'p', 'q', 'dp', 'dq', 'qi']) expect(keys[0]).not.toHaveProperty(member)
    expect(Buffer.from(keys[0]!.n!, 'base64url').length).toBe(256)

    const key = await loadToolKey(t.storage.db)
    expect(key.publicJwk.kid).toBe(keys[0]!.kid)
    const token = await new SignJWT({ hello: 'platform' })
      .setProtectedHeader({ alg: 'RS256', kid: key.publicJwk.kid })
      .sign(key.privateKey)
    const { payload } = await jwtVerify(token, await importJWK(keys[0]!, 'RS256'))
    expect(payload.hello).toBe('platform')
    // The published key is the key's own: a signature by it verifies with the public half only.
    const signature = (await import('node:crypto')).sign('sha256', Buffer.from('x'), key.privateKey)
    expect(verify('sha256', Buffer.from('x'), createPublicKey({ key: keys[0]!, format: 'jwk' }), signature)).toBe(true)
  })

  it('is one key for instances loading it at the same moment', async () => {
    t = await buildTestApp()
    const loaded = await Promise.all(Array.from({ length: 6 }, () => loadToolKey(t.storage.db)))
    expect(new Set(loaded.map((key) => key.publicJwk.kid)).size).toBe(1)
  })

  it('keeps a rotated key published for the retirement period, then drops it; the rotation is audited', async () => {
    t = await buildTestApp()
    const before = await loadToolKey(t.storage.db)
    const rotated = await rotateToolKey(t.storage.db, { actor: 'account:operator@example.org' }, t.clock)
    expect(rotated.retired).toBe(before.publicJwk.kid)
    expect(rotated.current).not.toBe(before.publicJwk.kid)
    const keys = toolKeys(t.storage.db, t.clock)
    expect((await keys.current()).publicJwk.kid).toBe(rotated.current)
    expect((await keys.keySet()).keys.map((key) => key.kid)).toEqual([rotated.current, rotated.retired])

    t.clock.advance(RETIRED_KEY_DAYS * DAY + 1)
    expect((await toolKeys(t.storage.db, t.clock).keySet()).keys.map((key) => key.kid)).toEqual([rotated.current])
    const audit = await listAudit(t.storage.db)
    expect(audit[0]).toMatchObject({
      actor: 'account:operator@example.org',
      action: 'lti.key.rotate',
      target: 'lti-tool-key',
    })
    expect(audit[0]!.detail).not.toContain(
      before.privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64url'),
    )
  })

  it('rotates once when two rotations race', async () => {
    t = await buildTestApp()
    await loadToolKey(t.storage.db)
    const results = await Promise.allSettled([
      rotateToolKey(t.storage.db, { actor: 'cli:a' }, t.clock),
      rotateToolKey(t.storage.db, { actor: 'cli:b' }, t.clock),
    ])
    const done = results.filter((r) => r.status === 'fulfilled')
    expect(done.length).toBeGreaterThanOrEqual(1)
    const rotations = (await listAudit(t.storage.db)).filter((row) => row.action === 'lti.key.rotate')
    expect(rotations).toHaveLength(done.length)
    // Every key either rotation retired is still published beside the key in use.
    const published = (await toolKeys(t.storage.db, t.clock).keySet()).keys.map((key) => key.kid)
    for (const r of done) if (r.status === 'fulfilled') expect(published).toContain(r.value.retired)
  })
})
