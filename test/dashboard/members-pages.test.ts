/**
 * The Members page and the invitation link over a real socket: an owner invites by mail, the
 * invited address joins once with the role it was given (another account opening the link is
 * refused and leaves it valid), a viewer can read but not change anything, roles change and
 * members go (their sessions with them), an organisation always keeps an owner even when two
 * owners demote each other at once, and an account switches between its organisations.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ManualClock } from '../../src/clock.js'
import { createOrganisation } from '../../src/storage/access-repository.js'
import type { Storage } from '../../src/storage/connection.js'
import { createTestStorage, type ListeningApp, listeningApp, START, testConfig } from '../helper.js'
import type { HttpRequest } from '../support/http-client.js'
import { DashboardClient, enrolAuthenticator, mailedLink, makeOwner } from './dashboard-client.js'

const MEMBERS = '/dashboard/partner/members'

describe('members and invitations', () => {
  const clock = new ManualClock(START)
  let storage: Storage
  let listening: ListeningApp
  let socket: (request: HttpRequest) => ReturnType<ListeningApp['client']['request']>
  let acme: string
  let dana: DashboardClient
  const client = (ip: string) => new DashboardClient(listening.app, ip, socket)
  const accountId = async (email: string) =>
    (await storage.db.selectFrom('accounts').select('id').where('email', '=', email).executeTakeFirstOrThrow()).id
  const roles = async () =>
    (
      await storage.db
        .selectFrom('memberships as m')
        .innerJoin('accounts as a', 'a.id', 'm.account_id')
        .select(['a.email', 'm.role'])
        .where('m.organisation_id', '=', acme)
        .orderBy('a.email')
        .execute()
    ).map((row) => `${row.email} ${row.role}`)

  /** Invites `email` as `role` from Dana's session, and has a new client sign up and join through the mail. */
  async function invited(email: string, role: string, ip: string): Promise<DashboardClient> {
    expect((await dana.post(`${MEMBERS}/invite`, { email, role })).headers.location).toBe(`${MEMBERS}?notice=invited`)
    const link = await mailedLink(storage.db, email, 'invitation')
    const member = client(ip)
    expect((await member.signUp(email)).statusCode).toBe(200)
    expect((await member.useMailedLink(storage.db, email, 'invitation')).headers.location).toBe(
      `${MEMBERS}?notice=joined`,
    )
    expect(link).toContain('/dashboard/invitations/accept?token=')
    return member
  }

  beforeAll(async () => {
    storage = await createTestStorage()
    listening = await listeningApp({
      config: testConfig({ PUBLIC_URL: 'https://curriculum.example.org' }),
      storage,
      clock,
      pollChanges: false,
    })
    socket = (request) => listening.client.request(request)
    acme = (await createOrganisation(storage.db, 'Acme Learning', clock.now())).id
    dana = client('192.0.2.70')
    expect((await dana.signUp('dana@acme.example')).statusCode).toBe(200)
    await makeOwner(storage.db, 'dana@acme.example', acme)
  })
  afterAll(async () => {
    await listening?.close()
    await storage?.close()
  })

  it('lists the members for everyone, with the owner’s forms', async () => {
    const page = await dana.get(MEMBERS)
    expect(page.statusCode).toBe(200)
    expect(page.body).toContain('dana@acme.example (you)')
    expect(page.body).toContain('Invite a member')
    expect(page.body).toContain('No invitation is pending.')
  })

  it('invites by mail; the invited address joins once, with its role; a viewer reads and changes nothing', async () => {
    const vic = await invited('vic@contractor.example', 'viewer', '192.0.2.71')
    expect(await roles()).toEqual(['dana@acme.example owner', 'vic@contractor.example viewer'])
    const page = await vic.get(MEMBERS)
    expect(page.statusCode).toBe(200)
    expect(page.body).not.toContain('Invite a member')
    expect(page.body).toContain('You are a <strong>viewer</strong>')
    for (const [url, form] of [
      ['/dashboard/partner/keys', { mode: 'live', 'live-name': 'x' }],
      ['/dashboard/partner/webhooks', { url: 'https://hooks.example.org/x' }],
      [`${MEMBERS}/invite`, { email: 'x@example.org', role: 'owner' }],
    ] as const) {
      const refused = await vic.post(url, form)
      expect(refused.statusCode, url).toBe(403)
      expect(refused.body).toContain('As a viewer of this organisation you cannot do this.')
    }
    expect(await roles()).toEqual(['dana@acme.example owner', 'vic@contractor.example viewer'])
  })

  it('refuses an invitation opened by another signed-in account, and keeps it for the right one', async () => {
    await dana.post(`${MEMBERS}/invite`, { email: 'dev@acme.example', role: 'developer' })
    const link = await mailedLink(storage.db, 'dev@acme.example', 'invitation')
    const stranger = client('192.0.2.72')
    await stranger.signUp('stranger@elsewhere.example')
    const token = new URL(link, 'http://x').searchParams.get('token')!
    const refused = await stranger.post('/dashboard/invitations/accept', { token })
    expect(refused.statusCode).toBe(409)
    expect(refused.body).toContain('This invitation was sent to another e-mail address')
    const dev = client('192.0.2.73')
    await dev.signUp('dev@acme.example')
    expect((await dev.post('/dashboard/invitations/accept', { token })).statusCode).toBe(303)
    expect((await dev.post('/dashboard/invitations/accept', { token })).statusCode).toBe(409)
    expect((await dev.get('/dashboard/invitations/accept?token=cut-short')).statusCode).toBe(404)
    expect(await roles()).toContain('dev@acme.example developer')
  })

  it('changes a role and removes a member, whose sessions end at once', async () => {
    const vic = await accountId('vic@contractor.example')
    expect((await dana.post(`${MEMBERS}/${vic}/role`, { role: 'developer' })).statusCode).toBe(303)
    expect(await roles()).toContain('vic@contractor.example developer')
    const removed = client('192.0.2.71')
    await removed.signIn('vic@contractor.example')
    expect((await removed.get(MEMBERS)).statusCode).toBe(200)
    expect((await dana.post(`${MEMBERS}/${vic}/remove`)).headers.location).toBe(`${MEMBERS}?notice=member-removed`)
    expect((await removed.get(MEMBERS)).statusCode).toBe(303)
    expect(await roles()).not.toContain('vic@contractor.example developer')
  })

  it('keeps an owner: the last one cannot leave or be demoted, and two owners demoting each other leave one', async () => {
    const danaId = await accountId('dana@acme.example')
    expect((await dana.post(`${MEMBERS}/${danaId}/role`, { role: 'viewer' })).statusCode).toBe(409)
    expect((await dana.post(`${MEMBERS}/leave`)).statusCode).toBe(409)
    const devId = await accountId('dev@acme.example')
    await dana.post(`${MEMBERS}/${devId}/role`, { role: 'owner' })
    const dev = client('192.0.2.73')
    await dev.signIn('dev@acme.example')
    const [a, b] = await Promise.all([
      dana.post(`${MEMBERS}/${devId}/role`, { role: 'viewer' }),
      dev.post(`${MEMBERS}/${danaId}/role`, { role: 'viewer' }),
    ])
    // The loser is refused by the case (409), or by the page's role check if the winner committed first (403).
    const [won, lost] = [a.statusCode, b.statusCode].sort()
    expect(won).toBe(303)
    expect([403, 409]).toContain(lost)
    expect((await roles()).filter((r) => r.endsWith(' owner'))).toHaveLength(1)
  })

  it('lets an owner with a second factor require one of every member, who is then sent to set it up', async () => {
    const danaId = await accountId('dana@acme.example')
    // Whichever owner won the race above: Dana owns, Dev develops.
    const setRole = (id: string, role: 'owner' | 'developer') =>
      storage.db
        .updateTable('memberships')
        .set({ role })
        .where('account_id', '=', id)
        .where('organisation_id', '=', acme)
    await setRole(danaId, 'owner').execute()
    await setRole(await accountId('dev@acme.example'), 'developer').execute()
    const refused = await dana.post(`${MEMBERS}/two-step`, { required: 'yes' })
    expect(refused.statusCode).toBe(409)
    expect(refused.body).toContain('Set up two-step sign-in for yourself first')
    dana.authenticator = await enrolAuthenticator(storage.db, { id: danaId, email: 'dana@acme.example' }, clock)
    expect((await dana.post(`${MEMBERS}/two-step`, { required: 'yes' })).headers.location).toBe(
      `${MEMBERS}?notice=two-step-org-on`,
    )
    const page = await dana.get(MEMBERS)
    expect(page.body).toContain('Every member needs two-step sign-in')
    const dev = client('192.0.2.73')
    await dev.signIn('dev@acme.example')
    const sent = await dev.get('/dashboard/partner')
    expect(sent.statusCode).toBe(303)
    expect(sent.headers.location).toBe('/dashboard/account/two-step?notice=two-step-required-org')
    expect((await dev.post('/dashboard/partner/keys', { mode: 'test', 'test-name': 'x' })).statusCode).toBe(403)
    expect((await dev.get('/dashboard/account')).statusCode).toBe(200)
    expect((await dev.post(`${MEMBERS}/two-step`, { required: 'no' })).statusCode).toBe(403)
    await dana.post(`${MEMBERS}/two-step`, { required: 'no' })
    expect((await dev.get('/dashboard/partner')).statusCode).toBe(200)
  })

  it('lets an account in two organisations switch between them on its Account page', async () => {
    const beta = (await createOrganisation(storage.db, 'Beta Books', clock.now())).id
    await makeOwner(storage.db, 'stranger@elsewhere.example', beta)
    const stranger = client('192.0.2.72')
    await stranger.signIn('stranger@elsewhere.example')
    await stranger.post(`${MEMBERS}/invite`, { email: 'dana@acme.example', role: 'viewer' })
    await dana.useMailedLink(storage.db, 'dana@acme.example', 'invitation')
    const account = await dana.get('/dashboard/account')
    expect(account.body).toContain('Beta Books')
    expect((await dana.get(MEMBERS)).body).toContain('Acme Learning')
    const switched = await dana.post('/dashboard/account/organisation', { organisationId: beta })
    expect(switched.headers.location).toBe('/dashboard/partner?notice=switched')
    expect((await dana.get(MEMBERS)).body).toContain('The members of <strong>Beta Books</strong>')
    expect((await dana.post('/dashboard/account/organisation', { organisationId: 'not-mine' })).statusCode).toBe(404)
  })
})
