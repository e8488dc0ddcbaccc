/**
 * Every kind of notice, queued by its case and sent by the mail worker to a real SMTP server
 * started here, on this run's engine: each arrives at the right address with its subject, a plain
 * text and an HTML body, and no student's name.
 */
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { recordAgreement } from '../../src/cases/agreement-record.js'
import { decideApplication, submitApplication } from '../../src/cases/applications.js'
import { sendDueNotices } from '../../src/cases/due-notices.js'
import { queueEndpointDisabledNotice, queueSecondFactorNotice, recordSignInDevice } from '../../src/cases/notices.js'
import { ManualClock } from '../../src/clock.js'
import { MailWorker } from '../../src/mail/mail-worker.js'
import { createApiKey, createOrganisation } from '../../src/storage/access-repository.js'
import { createAccount, markEmailVerified } from '../../src/storage/account-repository.js'
import { insertMembership } from '../../src/storage/membership-repository.js'
import { createTestStorage, freshDatabaseUrl, START } from '../helper.js'
import { perSuite } from '../support/built.js'
import { SmtpTestServer } from '../support/smtp-test-server.js'

const DAY = 86_400_000
const CONTEXT = { publicUrl: 'https://curriculum.test' }
/** A name a child could have: no notice may carry one. */
const STUDENT_NAME = 'Zebediah'

describe('notice mails through SMTP', () => {
  const storage = perSuite(() => createTestStorage({ url: freshDatabaseUrl(), catalog: false }))
  const clock = new ManualClock(START)
  const server = new SmtpTestServer()

  beforeAll(async () => {
    await server.start()
    const db = storage.db
    const now = START
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
    const second = await submitApplication(db, application, now + 1)
    const approve = { event: 'approve', grantedScopes: ['students:read'] } as const
    await decideApplication(db, second.id, approve, 'op', now + 2, CONTEXT)

    // An agreement recorded that ends in 20 days, then ended ones with deadlines; a live key expiring.
    await recordAgreement(
      db,
      { organisationId, signedAt: now - DAY, expiresAt: now + 20 * DAY, documentRef: 'DSA-1' },
      now,
      CONTEXT,
    )
    await createApiKey(db, { organisationId, name: 'production', scopes: [], expiresAt: now + 5 * DAY }, now)
    const endedOrg = (await createOrganisation(db, 'Ended Ltd', now)).id
    await insertMembership(db, { organisationId: endedOrg, accountId: owner.id, role: 'owner' }, now)
    const ended = {
      organisationId: endedOrg,
      signedAt: now - 90 * DAY,
      expiresAt: now - 20 * DAY,
      documentRef: 'DSA-0',
    }
    await recordAgreement(db, { ...ended, dispositionDays: 30 }, now - 90 * DAY)
    expect(await sendDueNotices(db, now, CONTEXT)).toBe(4)

    // A webhook endpoint disabled, a second factor added and removed, a new device.
    await db
      .insertInto('webhook_endpoints')
      .values({
        id: 'ep-1',
        organisation_id: organisationId,
        mode: 'live',
        url: 'https://hooks.acme.test/in',
        events: 'student.unlinked',
        secret: 's',
        previous_secret: null,
        previous_secret_until: null,
        status: 'disabled',
        disabled_reason: 'Every delivery failed for three days.',
        failing_since: null,
        created_at: new Date(now).toISOString(),
        created_by: null,
      })
      .execute()
    await queueEndpointDisabledNotice(db, 'ep-1', CONTEXT, now)
    await queueSecondFactorNotice(db, dev, true, CONTEXT, now)
    await queueSecondFactorNotice(db, dev, false, CONTEXT, now)
    const origin = { address: '203.0.113.9', userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0' }
    await recordSignInDevice(db, dev, 'first-browser', origin, CONTEXT, now)
    await recordSignInDevice(db, dev, 'second-browser', origin, CONTEXT, now)

    const worker = new MailWorker({
      db,
      clock,
      log: pino({ level: 'silent' }),
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
  afterAll(async () => server.stop())

  const find = (to: string, subject: RegExp) =>
    server.arrived.filter((mail) => mail.to.includes(to) && subject.test(mail.subject))

  const checked = (to: string, subject: RegExp, body: string) => {
    const found = find(to, subject)
    expect(found, `${subject} to ${to}`).toHaveLength(1)
    const raw = found[0]!.raw.replace(/=\r?\n/g, '')
    expect(raw).toMatch(/^Content-Type: text\/plain/im)
    expect(raw).toMatch(/^Content-Type: text\/html/im)
    expect(raw).toContain(body)
    expect(raw).not.toContain(STUDENT_NAME)
  }

  it('sends the decision to the applicant: approved with its scopes, rejected with the reason', () => {
    checked('apply@new.test', /^Live access approved for New Co$/, 'students:read')
    checked('apply@new.test', /^Your application for New Co was not approved$/, 'No agreement yet.')
  })

  it('sends the agreement recorded and ending to owners only', () => {
    checked('owner@acme.test', /^Data-sharing agreement recorded for Acme Learning$/, 'DSA-1')
    checked('owner@acme.test', /^The data-sharing agreement of Acme Learning ends on/, 'DSA-1')
    expect(find('dev@acme.test', /agreement/)).toEqual([])
  })

  it('sends a live key expiring to owners and developers', () => {
    checked('owner@acme.test', /^A live key of Acme Learning expires on/, 'production')
    checked('dev@acme.test', /^A live key of Acme Learning expires on/, 'production')
  })

  it('sends a webhook endpoint disabled to owners and developers', () => {
    checked('owner@acme.test', /^A webhook endpoint of Acme Learning was disabled$/, 'https://hooks.acme.test/in')
    checked('dev@acme.test', /^A webhook endpoint of Acme Learning was disabled$/, 'https://hooks.acme.test/in')
  })

  it('sends the deletion deadline to owners', () => {
    checked('owner@acme.test', /^Ended Ltd must delete the shared data by/, 'DSA-0')
  })

  it('sends the security notices to the account', () => {
    checked('dev@acme.test', /^Two-step sign-in was turned on/, 'always sent')
    checked('dev@acme.test', /^Two-step sign-in was turned off/, 'always sent')
    checked('dev@acme.test', /^New sign-in to your Curriculum API account$/, 'Firefox on Linux')
    expect(server.arrived).toHaveLength(12)
  })
})
