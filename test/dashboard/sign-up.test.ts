/**
 * Sign-up over HTTP: any valid address works, however long (RFC 5321 allows 254 characters).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sandboxName } from '../../src/storage/sandbox-repository.js'
import { buildTestApp, type TestContext } from '../helper.js'
import { DashboardClient } from './dashboard-client.js'

/** A syntactically valid address of exactly `length` characters. */
function addressOf(length: number, seed: string): string {
  const domain = `${seed}.example.org`
  const local = 'x'.repeat(Math.min(64, length - domain.length - 1))
  let host = domain
  while (local.length + 1 + host.length < length) host = `${'d'.repeat(Math.min(63, length - local.length - 1 - host.length - 1))}.${host}`
  return `${local}@${host}`
}

describe('dashboard sign-up', () => {
  let t: TestContext

  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(async () => t.close())

  for (const length of [130, 254]) {
    it(`signs up a valid ${length}-character e-mail address and names its sandbox within 120 characters`, async () => {
      const email = addressOf(length, `long${length}`)
      expect(email).toHaveLength(length)
      const client = new DashboardClient(t.app, `192.0.2.${length % 250}`)
      const res = await client.signUp(email)
      expect(res.statusCode, res.body.slice(0, 2000)).toBe(201)
      const account = await t.storage.db.selectFrom('accounts').select('sandbox_organisation_id').where('email', '=', email).executeTakeFirstOrThrow()
      const sandbox = await t.storage.db.selectFrom('organisations').select('name').where('id', '=', account.sandbox_organisation_id!).executeTakeFirstOrThrow()
      expect(sandbox.name.length).toBeLessThanOrEqual(120)
      expect(sandbox.name.startsWith(`Sandbox: ${email.slice(0, 60)}`)).toBe(true)
    })
  }

  it('keeps the plain name for short addresses and tells long ones apart by a digest', () => {
    expect(sandboxName('dev@acme.example')).toBe('Sandbox: dev@acme.example')
    const a = `${'x'.repeat(64)}@${'d'.repeat(63)}.a.example.org`
    const b = `${'x'.repeat(64)}@${'d'.repeat(63)}.b.example.org`
    expect(sandboxName(a)).not.toBe(sandboxName(b))
    expect(sandboxName(a)).toHaveLength(120)
  })
})
