/**
 * The operator's roster import pages over HTTP: the upload is refused without the form's CSRF
 * token or the operator's role before any file is written; an accepted upload waits in a private
 * file (0600 in a 0700 folder) until it is imported or cancelled, which remove it; the preview
 * counts, the problems page lists every bad row as file:line: field: message, a file over the
 * limit is refused; each step is an audit row; and no family name reaches a page or a log line.
 */
import fs from 'node:fs'
import path from 'node:path'
import { Writable } from 'node:stream'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { ManualClock } from '../../src/clock.js'
import type { TypedApp } from '../../src/http/app-types.js'
import { RosterUploads } from '../../src/services/roster-uploads.js'
import { createOrganisation } from '../../src/storage/access-repository.js'
import { shareSchool } from '../../src/cases/shares.js'
import type { Storage } from '../../src/storage/connection.js'
import { createTestStorage, START, tempDir, testConfig } from '../helper.js'
import { manifest, ORGS_HEADER, removeTempDirs, table, USERS_11_HEADER, zipBytes } from '../roster/roster-export.js'
import { createOperatorWithAuthenticator, DashboardClient, OPERATOR } from './dashboard-client.js'
import { rowCount } from '../support/row-count.js'

const FAMILY = 'Surnamington'
const student = (sourcedId: string, givenName: string, orgSourcedIds: string) => ({
  sourcedId,
  role: 'student',
  orgSourcedIds,
  givenName,
  familyName: FAMILY,
  email: `${sourcedId}@mail.example.org`,
})
const exportZip = (users: ReturnType<typeof student>[]) =>
  zipBytes(
    Object.entries({
      'manifest.csv': manifest('1.1', { orgs: 'bulk', users: 'bulk' }),
      'orgs.csv': table(ORGS_HEADER, [{ sourcedId: 'sch-north', name: 'North Elementary', type: 'school' }]),
      'users.csv': table(USERS_11_HEADER, users),
    }).map(([name, data]) => ({ name, data })),
  )
const GOOD = exportZip([student('s1', 'Ada', 'sch-north'), student('s2', 'Ben', 'sch-north')])
const BAD = exportZip([student('s1', 'Ada', 'sch-north'), student('s2', 'Ben', 'sch-east')])

describe("the operator's roster import pages", () => {
  let storage: Storage
  let app: TypedApp
  let operator: DashboardClient
  let dir: string
  const clock = new ManualClock(START)
  const logged: string[] = []
  const PAGE = '/dashboard/operator/roster'

  beforeAll(async () => {
    storage = await createTestStorage()
    dir = path.join(tempDir(), 'uploads')
    const stream = new Writable({
      write(chunk, _encoding, done) {
        logged.push(String(chunk))
        done()
      },
    })
    const config = testConfig({ ROSTER_UPLOAD_DIR: dir, ROSTER_UPLOAD_MAX_MIB: '1' })
    app = await buildApp({ config, storage, clock, logger: pino({ level: 'trace' }, stream), pollChanges: false })
    await app.ready()
    operator = new DashboardClient(app, '192.0.2.41')
    operator.authenticator = await createOperatorWithAuthenticator(storage.db, clock)
    expect((await operator.signIn(OPERATOR.email, OPERATOR.password)).statusCode).toBe(303)
  })
  afterAll(async () => {
    await app?.close()
    await storage?.close()
    removeTempDirs()
  })

  const files = () => (fs.existsSync(dir) ? fs.readdirSync(dir).sort() : [])
  const exports = () => files().filter((name) => name.endsWith('.zip'))
  const audit = (action: string) =>
    storage.db.selectFrom('audit_log').selectAll().where('action', '=', action).orderBy('id').execute()
  const students = () => rowCount(storage.db, 'students')
  const linked = async (organisationId: string) =>
    (
      await storage.db
        .selectFrom('student_organisations')
        .select('student_id')
        .where('organisation_id', '=', organisationId)
        .execute()
    ).length
  const upload = (data: Buffer, fields: Record<string, string | null> = {}, client = operator) =>
    client.postFile(PAGE, fields, { field: 'export', name: 'district.zip', data })

  it('shows a form that uploads without JavaScript', async () => {
    const page = await operator.get(PAGE)
    expect(page.statusCode).toBe(200)
    expect(page.body).toContain('enctype="multipart/form-data"')
    // The token comes before the file, so that it is checked before the file is written.
    expect(page.body.indexOf('name="_csrf"')).toBeLessThan(page.body.indexOf('type="file"'))
    expect(page.body).toContain('Never stored, logged or shown: family and middle names')
  })

  it('refuses an upload without the token, or from another origin, and writes no file', async () => {
    expect((await upload(GOOD, { _csrf: null })).statusCode).toBe(403)
    expect((await upload(GOOD, { _csrf: 'forged' })).statusCode).toBe(403)
    const anonymous = new DashboardClient(app, '192.0.2.42')
    expect((await upload(GOOD, {}, anonymous)).statusCode).toBe(303)
    expect(files()).toEqual([])
  })

  it('previews an upload, keeps it private until cancelled, and audits both', async () => {
    const posted = await upload(GOOD)
    expect(posted.statusCode).toBe(303)
    const token = posted.headers.location!.split('/').at(-1)!
    // The export, and beside it its state: who uploaded it and the preview's counts.
    expect(files()).toEqual([`${token}.pending.json`, `${token}.zip`])
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700)
    for (const name of files()) expect(fs.statSync(path.join(dir, name)).mode & 0o777).toBe(0o600)
    expect(fs.readFileSync(path.join(dir, `${token}.pending.json`), 'utf8')).not.toMatch(/Ada|Ben|Surnamington/)
    const preview = await operator.follow(posted)
    expect(preview.statusCode).toBe(200)
    expect(preview.body).toMatch(/New students<\/td><td>2</)
    expect(preview.body).toMatch(/New schools<\/td><td>1</)
    expect(preview.body).toContain('Confirm the import')
    expect(await students()).toBe(0)

    const cancelled = await operator.post(`${PAGE}/${token}/cancel`)
    expect(cancelled.headers.location).toBe(`${PAGE}?cancelled=1`)
    expect(files()).toEqual([])
    expect((await operator.get(`${PAGE}/${token}`)).statusCode).toBe(404)
    expect((await operator.post(`${PAGE}/${token}/confirm`)).statusCode).toBe(404)
    expect(await audit('roster.upload')).toHaveLength(1)
    expect(await audit('roster.cancel')).toHaveLength(1)
    expect(await students()).toBe(0)
  })

  it('imports on confirm, once, removes the file and shows the result', async () => {
    const posted = await upload(GOOD, { tier: 'innovator' })
    const token = posted.headers.location!.split('/').at(-1)!
    const confirmed = await operator.post(`${PAGE}/${token}/confirm`)
    expect(confirmed.statusCode).toBe(303)
    // The export is gone; what the result page shows (counts) stays until swept.
    expect(files()).toEqual([`${token}.done.json`])
    const result = await operator.follow(confirmed)
    expect(result.body).toContain('The roster was imported')
    expect(result.body).toMatch(/New students<\/td><td>2</)
    expect(await students()).toBe(2)
    const tiers = await storage.db.selectFrom('students').select('tier').distinct().execute()
    expect(tiers).toEqual([{ tier: 'innovator' }])
    const [row] = await audit('roster.import')
    expect(row!.actor).toBe(`account:${OPERATOR.email}`)
    expect(JSON.parse(row!.detail!)).toMatchObject({ students: { new: 2 }, tier: 'innovator' })
    expect((await operator.post(`${PAGE}/${token}/confirm`)).statusCode).toBe(404)
  })

  it("says on the confirmation page the export's source and schools, and per partner how many links end", async () => {
    const organisation = await createOrganisation(storage.db, 'Acme Learning', clock.now())
    const north = await storage.db
      .selectFrom('schools')
      .select('id')
      .where('external_id', '=', 'sch-north')
      .executeTakeFirstOrThrow()
    await shareSchool(
      storage.db,
      { organisationId: organisation.id, schoolId: north.id, createdBy: 'test' },
      clock.now(),
    )
    const posted = await upload(exportZip([student('s1', 'Ada', 'sch-north')]))
    const token = posted.headers.location!.split('/').at(-1)!
    const preview = await operator.follow(posted)
    expect(preview.statusCode).toBe(200)
    expect(preview.body).toContain('Source system: <strong>District SIS, code SIS-1</strong>')
    expect(preview.body).toMatch(/<td>North Elementary<\/td><td>sch-north<\/td><td>0<\/td><td>1<\/td>/)
    expect(preview.body).toMatch(/<td>Acme Learning<\/td><td>1<\/td>/)
    expect(preview.body).toContain('Import and end 1 partner link')
    expect(await linked(organisation.id)).toBe(2)
    await operator.post(`${PAGE}/${token}/cancel`)
    expect(await linked(organisation.id)).toBe(2)
  })

  it('lists every problem and removes the upload; refuses a file over the limit', async () => {
    const bad = await upload(BAD)
    expect(bad.statusCode).toBe(400)
    expect(bad.body).toContain(
      'users.csv:3: orgSourcedIds: names the org &quot;sch-east&quot;, which orgs.csv does not hold',
    )
    expect(exports()).toEqual([])
    const large = await upload(Buffer.alloc(1024 * 1024 + 10, 1))
    expect(large.statusCode).toBe(413)
    expect(exports()).toEqual([])
  })

  it('never shows or logs a family name or e-mail address', () => {
    expect(logged.length).toBeGreaterThan(10)
    expect(logged.join('\n')).not.toMatch(new RegExp(`${FAMILY}|mail\\.example\\.org`))
  })

  it('sweeps uploads left behind', () => {
    const uploads = new RosterUploads(dir, 1024)
    fs.mkdirSync(dir, { recursive: true })
    const file = uploads.fileOf('a'.repeat(43))!
    fs.writeFileSync(file, 'left behind')
    const old = new Date(Date.now() - 2 * 3_600_000)
    for (const name of files()) fs.utimesSync(path.join(dir, name), old, old)
    expect(uploads.sweep(Date.now(), 3_600_000)).toBe(2)
    expect(files()).toEqual([])
    expect(uploads.fileOf('../../etc/passwd')).toBeUndefined()
  })
})
