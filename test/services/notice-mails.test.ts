/**
 * Every kind of notice, queued by the case that tells of it (the decision, the invitation, the
 * agreement recorded, the hourly task, the webhook deliverer disabling an endpoint, the second
 * factor confirmed and removed, a sign-in from a new device) and sent by the mail worker to a real
 * SMTP server started here, on this run's engine: each arrives once at the right addresses with
 * its subject, a plain text and an HTML body, and nothing else arrives.
 */
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { recordAgreement } from '../../src/cases/agreement-record.js'
import { decideApplication, submitApplication } from '../../src/cases/applications.js'
import { sendDueNotices } from '../../src/cases/due-notices.js'
import { inviteMember } from '../../src/cases/members.js'
import { resetOperatorSecondFactor } from '../../src/cases/operators.js'
import { recordSignInDevice } from '../../src/cases/notices.js'
import { registerPasskey, registrationOptions, relyingParty, removePasskey } from '../../src/cases/passkeys.js'
import { beginTotpEnrolment, confirmTotpEnrolment, removeTotp, secondFactorKey } from '../../src/cases/second-factor.js'
import { ManualClock } from '../../src/clock.js'
import { totpCode, totpStep } from '../../src/domain/totp.js'
import { MailWorker } from '../../src/mail/mail-worker.js'
import { createApiKey, createOrganisation } from '../../src/storage/access-repository.js'
import { createAccount, markEmailVerified } from '../../src/storage/account-repository.js'
import { insertMembership } from '../../src/storage/membership-repository.js'
import { createEndpoint } from '../../src/storage/webhook-endpoint-repository.js'
import { announceCatalogPublished } from '../../src/storage/webhook-repository.js'
import { WebhookDeliverer } from '../../src/webhooks/webhook-deliverer.js'
import { createTestStorage, freshDatabaseUrl, START } from '../helper.js'
import { perSuite } from '../support/built.js'
import { SmtpTestServer } from '../support/smtp-test-server.js'
import { SoftwarePasskey } from '../support/software-passkey.js'
import { Receiver } from '../support/webhook-receiver.js'

const DAY = 86_400_000
const CONTEXT = { publicUrl: 'https://curriculum.test' }
const RP = relyingParty(CONTEXT.publicUrl)

describe('notice mails through SMTP', () => {
  const storage = perSuite(() => createTestStorage({ url: freshDatabaseUrl(), catalog: false }))
  const clock = new ManualClock(START)
  const server = new SmtpTestServer()
  const receiver = new Receiver()
  let endpointStatus: string | undefined
  let endpointUrl = ''

  beforeAll(async () => {
    await server.start()
    const db = storage.db
    const now = START
    const log = pino({ level: 'silent' })
    const organisationId = (await createOrganisation(db, 'Acme Learning', now)).id
    const owner = await createAccount(db, { email: 'owner@acme.test', passwordHash: 'x', role: 'partner' }, now)
    const dev = await createAccount(db, { email: 'dev@acme.test', passwordHash: 'x', role: 'partner' }, now)
    await insertMembership(db, { organisationId, accountId: owner.id, role: 'owner' }, now)
    await insertMembership(db, { organisationId, accountId: dev.id, role: 'developer' }, now)

    // Decisions: one rejected, one approved, to the applicant.
    const applicant = await createAccount(db, { email: 'apply@new.test', passwordHash: 'x', role: 'partner' }, now)
    await markEmailVerified(db, applicant.id, 'apply@new.test', now)
    const application = {
      accountId: applicant.id,
      organisationName: 'New Co',
      website: 'https://new.test',
      contactName: 'A',
      contactEmail: 'apply@new.test',
      intendedUse: 'tutoring',
      requestedScopes: ['students:read' as const],
    }
    const first = await submitApplication(db, application, now)
    await decideApplication(db, first.id, { event: 'reject', reason: 'No agreement yet.' }, 'op', now, CONTEXT)
    const second = await submitApplication(db, application, now)
    const approve = { event: 'approve', grantedScopes: ['students:read'] } as const
    await decideApplication(db, second.id, approve, 'op', now, CONTEXT)

    // An invitation from the owner.
    const invitation = { organisationId, email: 'new@acme.test', role: 'viewer' as const }
    await inviteMember(db, invitation, { id: owner.id, email: owner.email }, now, CONTEXT)

    // An agreement recorded that ends in 20 days; a live key expiring in 5; three ended agreements
    // whose deletion deadlines are 10 days ahead, 2 days ahead and 10 days past.
    await recordAgreement(
      db,
      { organisationId, signedAt: now - DAY, expiresAt: now + 20 * DAY, documentRef: 'DSA-1' },
      now,
      CONTEXT,
    )
    await createApiKey(db, { organisationId, name: 'production', scopes: [], expiresAt: now + 5 * DAY }, now)
    const ended = async (name: string, endedDaysAgo: number, documentRef: string) => {
      const id = (await createOrganisation(db, name, now)).id
      await insertMembership(db, { organisationId: id, accountId: owner.id, role: 'owner' }, now)
      const terms = { signedAt: now - 90 * DAY, expiresAt: now - endedDaysAgo * DAY, documentRef, dispositionDays: 30 }
      await recordAgreement(db, { organisationId: id, ...terms }, now - 90 * DAY)
    }
    await ended('Ended Ltd', 20, 'DSA-14')
    await ended('Soon Ltd', 28, 'DSA-3')
    await ended('Lapsed Ltd', 40, 'DSA-PAST')
    expect(await sendDueNotices(db, now, CONTEXT)).toBe(6)

    // A webhook endpoint failing for three days, disabled by the deliverer's next failed attempt.
    endpointUrl = `${await receiver.start()}/in`
    receiver.script = [500]
    const { endpoint } = await createEndpoint(
      db,
      { organisationId, mode: 'live', url: endpointUrl, events: ['catalog.published'] },
      now - 4 * DAY,
    )
    await db
      .updateTable('webhook_endpoints')
      .set({ failing_since: new Date(now - 3 * DAY - 1).toISOString() })
      .where('id', '=', endpoint.id)
      .execute()
    await storage.writes.transaction((trx) =>
      announceCatalogPublished(trx, { catalogVersion: 2, tiers: 3, lessons: 30 }, now),
    )
    const deliverer = new WebhookDeliverer({
      storage,
      clock,
      log,
      timeoutMs: 2000,
      allowLoopback: true,
      notices: CONTEXT,
    })
    expect(await deliverer.run()).toBe(1)
    endpointStatus = (
      await db.selectFrom('webhook_endpoints').select('status').where('id', '=', endpoint.id).executeTakeFirst()
    )?.status

    // The developer's authenticator app confirmed; a sign-in from a second browser.
    const store = { db, key: await secondFactorKey(db) }
    const totp = await beginTotpEnrolment(store, dev, now)
    expect(await confirmTotpEnrolment(store, dev, totpCode(totp.secret, totpStep(now)), now, CONTEXT)).toMatchObject({
      ok: true,
    })
    // A passkey added (an answer sent again is refused and tells nothing), the app removed while the
    // passkey remains, then the passkey removed: the last one leaves the password alone.
    const key = new SoftwarePasskey({ origin: RP.origin, rpId: RP.id })
    const answer = key.register(await registrationOptions(db, dev, RP, now)) as never
    await registerPasskey(db, dev, { name: 'work laptop', response: answer }, RP, now, CONTEXT)
    await expect(registerPasskey(db, dev, { name: 'again', response: answer }, RP, now, CONTEXT)).rejects.toThrow()
    expect(await removeTotp(db, dev, now, undefined, CONTEXT)).toBe(true)
    expect(await removePasskey(db, dev, key.id.toString('base64url'), now, CONTEXT)).toBe(true)
    // An operator's lost phone: the CLI's reset removes every factor, told in one notice.
    const operator = await createAccount(db, { email: 'ops@curriculum.test', passwordHash: 'x', role: 'operator' }, now)
    const opTotp = await beginTotpEnrolment(store, operator, now)
    await confirmTotpEnrolment(store, operator, totpCode(opTotp.secret, totpStep(now)), now)
    const reset = await resetOperatorSecondFactor(db, operator.email, { actor: 'cli:root' }, now, CONTEXT)
    expect(reset.removed).toBe(true)
    const origin = { address: '203.0.113.9', userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0' }
    await recordSignInDevice(db, dev, 'first-browser', origin, CONTEXT, now)
    await recordSignInDevice(db, dev, 'second-browser', origin, CONTEXT, now)

    const worker = new MailWorker({
      db,
      clock,
      log,
      smtp: {
        url: server.url,
        from: 'no-reply@curriculum.test',
        connectionTimeoutMs: 2000,
        greetingTimeoutMs: 2000,
        socketTimeoutMs: 2000,
      },
    })
    while ((await worker.run()) > 0) {}
  })
  afterAll(async () => {
    await receiver.stop()
    await server.stop()
  })

  const find = (to: string, subject: RegExp) =>
    server.arrived.filter((mail) => mail.to.includes(to) && subject.test(mail.subject))

  const checked = (to: string, subject: RegExp, body: string) => {
    const found = find(to, subject)
    expect(found, `${subject} to ${to}`).toHaveLength(1)
    const raw = found[0]!.raw.replace(/=\r?\n/g, '')
    expect(raw).toMatch(/^Content-Type: text\/plain/im)
    expect(raw).toMatch(/^Content-Type: text\/html/im)
    expect(raw).toContain(body)
  }

  it('sends the decision to the applicant: approved with its scopes, rejected with the reason', () => {
    checked('apply@new.test', /^Live access approved for New Co$/, 'students:read')
    checked('apply@new.test', /^Your application for New Co was not approved$/, 'No agreement yet.')
  })

  it('sends the invitation to the invited address, with its link', () => {
    const found = server.arrived.filter((mail) => mail.to.includes('new@acme.test'))
    expect(found).toHaveLength(1)
    expect(found[0]!.raw.replace(/=\r?\n/g, '')).toContain('https://curriculum.test/dashboard/invitations/accept?')
  })

  it('sends the agreement recorded and ending to owners only', () => {
    checked('owner@acme.test', /^Data-sharing agreement recorded for Acme Learning$/, 'DSA-1')
    checked('owner@acme.test', /^The data-sharing agreement of Acme Learning ends on 2026-/, 'DSA-1')
    expect(find('dev@acme.test', /agreement/)).toEqual([])
  })

  it('sends a live key expiring to owners and developers', () => {
    checked('owner@acme.test', /^A live key of Acme Learning expires on/, 'production')
    checked('dev@acme.test', /^A live key of Acme Learning expires on/, 'production')
  })

  it('sends a webhook endpoint disabled by the deliverer to owners and developers', () => {
    expect(endpointStatus).toBe('disabled')
    expect(receiver.received).toHaveLength(1)
    checked('owner@acme.test', /^A webhook endpoint of Acme Learning was disabled$/, endpointUrl)
    checked('dev@acme.test', /^A webhook endpoint of Acme Learning was disabled$/, 'failed for three days')
  })

  it('sends each deletion deadline to owners: 14 days, 3 days, passed', () => {
    checked('owner@acme.test', /^Ended Ltd must delete the shared data by/, 'less than 14 days from now')
    checked('owner@acme.test', /^Soon Ltd must delete the shared data by/, 'less than 3 days from now')
    checked('owner@acme.test', /^The deletion deadline of Lapsed Ltd has passed without an attestation$/, 'DSA-PAST')
  })

  it('sends each second factor added or removed to the account: the app, a passkey', () => {
    checked('dev@acme.test', /^An authenticator app was added to your Curriculum API account$/, 'a code from the app')
    checked('dev@acme.test', /^A passkey was added to your Curriculum API account$/, '"work laptop"')
    checked('dev@acme.test', /^The authenticator app of your Curriculum API account was removed$/, 'still asks')
    checked('dev@acme.test', /^A passkey was removed from your Curriculum API account$/, 'the password alone')
    expect(find('owner@acme.test', /second|passkey|authenticator/i)).toEqual([])
  })

  it("sends an operator's second factor reset from the CLI to that operator, once", () => {
    checked('ops@curriculum.test', /^The second factor of your Curriculum API account was reset$/, 'reset-2fa')
    expect(server.arrived.filter((mail) => mail.to.includes('ops@curriculum.test'))).toHaveLength(1)
  })

  it('sends a sign-in from a new device to the account, and nothing else arrives', () => {
    checked('dev@acme.test', /^New sign-in to your Curriculum API account$/, 'Firefox on Linux')
    expect(server.arrived).toHaveLength(18)
  })
})
