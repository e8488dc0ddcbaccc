/**
 * The production recipe, run: Debian's nginx with the shipped site (deploy/nginx-curriculum-api.conf)
 * and a self-signed certificate, in front of the built server with the shipped environment's
 * TRUST_PROXY (deploy/curriculum-api.env). Clients connect from addresses of their own
 * (127.0.0.2, 127.0.0.3: Linux answers the whole of 127.0.0.0/8 on loopback), so that the address
 * the service limits by is visibly the client's, not nginx's 127.0.0.1.
 *
 * Skipped, with the reason in its title, where nginx is not installed (`apt-get install -y nginx`).
 */
import fs from 'node:fs'
import https from 'node:https'
import http from 'node:http'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CATALOG_DIR, tempDir } from '../helper.js'
import {
  ENROLLMENTS_11_HEADER,
  manifest,
  ORGS_HEADER,
  table,
  USERS_11_HEADER,
  zipBytes,
} from '../roster/roster-export.js'
import { freePort } from '../support/services.js'
import { NGINX, type RunningNginx, renderSite, SITE, selfSignedCertificate, startNginx } from './nginx.js'
import { ROOT, type RunningServer, startServer } from './process.js'
import { authenticatorCode } from '../support/authenticator.js'

const HAS_NGINX = fs.existsSync(NGINX)
const TITLE = HAS_NGINX
  ? 'behind nginx with the shipped site'
  : `behind nginx with the shipped site (skipped: ${NGINX} not found; apt-get install -y nginx)`

/** The shipped environment file's value of `name`. */
function shippedEnv(name: string): string {
  const text = fs.readFileSync(path.join(ROOT, 'deploy/curriculum-api.env'), 'utf8')
  const value = new RegExp(`^${name}=(.*)$`, 'm').exec(text)?.[1]
  if (value === undefined) throw new Error(`deploy/curriculum-api.env sets no ${name}`)
  return value
}

interface Answer {
  status: number
  headers: http.IncomingHttpHeaders
  body: string
}

interface Call {
  method?: string
  path: string
  headers?: Record<string, string>
  body?: string | Buffer
  /** The client's own address. */
  from?: string
  /** The name sent in TLS's server name indication. */
  servername?: string
}

describe.skipIf(!HAS_NGINX)(TITLE, () => {
  const dir = tempDir('nginx-proxy-')
  let server: RunningServer | undefined
  let nginx: RunningNginx | undefined
  let ca = ''
  let ports = { https: 0, http: 0, service: 0 }
  let catalogKey = ''
  let studentKey = ''
  let operator = { email: '', password: '', totpSecret: '' }

  const send = (secure: boolean, call: Call): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const port = secure ? ports.https : ports.http
      const options: https.RequestOptions = {
        host: '127.0.0.1',
        port,
        method: call.method ?? 'GET',
        path: call.path,
        localAddress: call.from ?? '127.0.0.2',
        headers: { host: `localhost:${port}`, ...call.headers },
        agent: false,
        ...(secure ? { ca, servername: call.servername ?? 'localhost' } : {}),
      }
      const request = (secure ? https : http).request(options, (response) => {
        let body = ''
        response.setEncoding('utf8')
        response.on('data', (chunk: string) => (body += chunk))
        response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body }))
      })
      request.on('error', reject)
      request.end(call.body)
    })
  const get = (path: string, key: string, from?: string) =>
    send(true, { path, headers: { authorization: `Bearer ${key}` }, ...(from ? { from } : {}) })

  beforeAll(async () => {
    ca = selfSignedCertificate(path.join(dir, 'tls'))
    server = await startServer({
      DATABASE_URL: `sqlite:${path.join(dir, 'proxied.db')}`,
      CATALOG_DIR,
      HOST: shippedEnv('HOST'),
      TRUST_PROXY: shippedEnv('TRUST_PROXY'),
      ROSTER_UPLOAD_DIR: path.join(dir, 'roster-uploads'),
      RATE_LIMIT: '5',
      AUTH_FAILURE_LIMIT: '3',
    })
    const out = server.output()
    catalogKey = /Demo catalog key[^\n]*\n\s+(cur_live_\w+)/.exec(out)![1]!
    studentKey = /Demo student key[^\n]*\n\s+(cur_live_\w+)/.exec(out)![1]!
    operator = {
      email: /Demo operator login: (\S+)/.exec(out)![1]!,
      password: /Demo operator password \(shown once\): (\S+)/.exec(out)![1]!,
      totpSecret: /Demo operator two-step sign-in key \(shown once\): (\S+)/.exec(out)![1]!,
    }
    ports = { https: await freePort(), http: await freePort(), service: Number(new URL(server.baseUrl).port) }
    const site = renderSite(fs.readFileSync(SITE, 'utf8'), ports, path.join(dir, 'tls'), path.join(dir, 'nginx/logs'))
    nginx = await startNginx(path.join(dir, 'nginx'), site)
  }, 60_000)

  afterAll(async () => {
    try {
      await nginx?.stop()
    } finally {
      await server?.stop('SIGKILL')
    }
  })

  it('answers the API over TLS with the service answering, its request id logged on both sides', async () => {
    const tiers = await send(true, {
      path: '/api/v1/tiers',
      headers: { authorization: `Bearer ${catalogKey}`, 'x-request-id': 'chosen-by-the-client' },
    })
    expect(tiers.status, tiers.body).toBe(200)
    expect((JSON.parse(tiers.body) as { tiers: unknown[] }).tiers).toHaveLength(3)
    expect(tiers.headers['strict-transport-security']).toBe('max-age=63072000')
    // The service's own id reaches the client; the one the client chose is not believed.
    const requestId = String(tiers.headers['x-request-id'])
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/)
    expect(await nginx!.accessLogWith(new RegExp(`request_id=${requestId}`))).toContain(`request_id=${requestId}`)
    // The service's line is written once the response has gone: waited for, not assumed.
    await server!.waitForOutput((out) => out.includes(`"reqId":"${requestId}"`), 5000)
    expect(server!.output()).not.toContain('chosen-by-the-client')
  })

  it("limits by the client's address, which a client cannot claim to be another's", async () => {
    const wrong = 'cur_live_notakeynotakeynotakeynotakey'
    // 127.0.0.2 spends its failures, then claims to be 127.0.0.3 and 203.0.113.9: still itself.
    for (let i = 0; i < 3; i++) expect((await get('/api/v1/tiers', wrong)).status).toBe(401)
    const spoofed = await send(true, {
      path: '/api/v1/tiers',
      headers: { authorization: `Bearer ${wrong}`, 'x-forwarded-for': '127.0.0.3, 203.0.113.9' },
    })
    expect(spoofed.status, spoofed.body).toBe(429)
    // Another client, through the same nginx (same socket address at the service), is not limited.
    expect((await get('/api/v1/tiers', wrong, '127.0.0.3')).status).toBe(401)
  })

  it('passes a 429 with its Retry-After and RateLimit headers as the service wrote them', async () => {
    let answer: Answer | undefined
    // RATE_LIMIT=5 per key; the first test spent one.
    for (let i = 0; i < 6 && answer?.status !== 429; i++) answer = await get('/api/v1/tiers', catalogKey, '127.0.0.4')
    expect(answer!.status, answer!.body).toBe(429)
    expect(answer!.headers['content-type']).toMatch(/^application\/problem\+json/)
    expect(Number(answer!.headers['retry-after'])).toBeGreaterThan(0)
    expect(answer!.headers.ratelimit).toMatch(/r=0/)
    expect(answer!.headers['ratelimit-policy']).toBeDefined()
    expect(answer!.headers['x-request-id']).toBe((JSON.parse(answer!.body) as { requestId: string }).requestId)
  })

  /** The origin a browser names: the dashboard's check compares it with the proxied host and scheme. */
  const origin = () => `https://localhost:${ports.https}`

  /** Signs the demo operator in through nginx, as a browser does; returns the sign-in's answer. */
  const signIn = async (from?: string) => {
    const login = await send(true, { path: '/dashboard/login', ...(from ? { from } : {}) })
    expect(login.status).toBe(200)
    const visitor = String(login.headers['set-cookie'])
    const csrf = /name="_csrf" value="([^"]+)"/.exec(login.body)![1]!
    const signedIn = await send(true, {
      method: 'POST',
      path: '/dashboard/login',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        cookie: visitor.split(';')[0]!,
        origin: origin(),
      },
      body: new URLSearchParams({ email: operator.email, password: operator.password, _csrf: csrf }).toString(),
      ...(from ? { from } : {}),
    })
    expect(signedIn.status, signedIn.body).toBe(303)
    const sessionOf = (answer: typeof signedIn) =>
      (answer.headers['set-cookie'] ?? []).find((cookie) => cookie.startsWith('__Host-cur_session='))!
    // The second step: the demo operator's authenticator code, sent from the code page's form.
    const waiting = sessionOf(signedIn).split(';')[0]!
    const codePage = await send(true, { path: signedIn.headers.location!, headers: { cookie: waiting } })
    expect(codePage.status).toBe(200)
    const codeCsrf = /name="_csrf" value="([^"]+)"/.exec(codePage.body)![1]!
    const coded = await send(true, {
      method: 'POST',
      path: '/dashboard/sign-in/code',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: waiting, origin: origin() },
      body: new URLSearchParams({ code: await authenticatorCode(operator.totpSecret), _csrf: codeCsrf }).toString(),
      ...(from ? { from } : {}),
    })
    expect(coded.status, coded.body).toBe(303)
    return { login, signedIn: coded, session: sessionOf(coded) }
  }

  it('signs an operator in to the dashboard with __Host- cookies marked Secure', async () => {
    const { login, signedIn, session } = await signIn()
    expect(String(login.headers['set-cookie'])).toMatch(
      /^__Host-cur_csrf=[\w-]+; Path=\/; HttpOnly; SameSite=Lax; Secure$/,
    )
    expect(session).toMatch(/^__Host-cur_session=[\w-]+; Path=\/; HttpOnly; SameSite=Lax; (Max-Age=\d+; )?Secure$/)
    const home = await send(true, { path: signedIn.headers.location!, headers: { cookie: session.split(';')[0]! } })
    expect(home.status).toBe(200)
  })

  it('redirects plain HTTP to HTTPS without reaching the service', async () => {
    const plain = await send(false, { path: '/api/v1/tiers?x=1', headers: { authorization: `Bearer ${catalogKey}` } })
    expect(plain.status).toBe(301)
    expect(plain.headers.location).toBe('https://localhost/api/v1/tiers?x=1')
    expect(plain.headers['x-request-id']).toBeUndefined()
  })

  it('keeps /metrics private: nginx answers 404 itself, the service never sees it', async () => {
    for (const url of ['/metrics', '/metrics/', '/metrics?name=x']) {
      const metrics = await send(true, { path: url, headers: { authorization: 'Bearer anything' } })
      expect(metrics.status).toBe(404)
      expect(metrics.headers['x-request-id'], url).toBeUndefined()
      expect(metrics.headers['content-type']).toMatch(/^text\/html/)
    }
    const logged = /"GET \/metrics HTTP\/1\.1" 404 .* upstream=- /
    expect(await nginx!.accessLogWith(logged)).toMatch(logged)
    expect(server!.output()).not.toContain('"path":"/metrics')
  })

  it('refuses a name it does not serve, over HTTP and in the TLS handshake', async () => {
    const other = await send(false, { path: '/api/v1/tiers', headers: { host: 'elsewhere.example' } }).catch(
      (error: NodeJS.ErrnoException) => error.code,
    )
    expect(other).toBe('ECONNRESET')
    const handshake = await send(true, { path: '/api/v1/tiers', servername: 'elsewhere.example' }).catch(
      (error: Error) => error.message,
    )
    expect(handshake).toMatch(/unrecognized name/)
  })

  it("leaves a body over the service's limit to the service's own 413; nginx refuses only past 1 MiB", async () => {
    const post = (bytes: number) =>
      send(true, {
        method: 'POST',
        path: '/api/v1/tiers',
        // Not the catalog key: the test before has spent its rate limit.
        headers: { authorization: `Bearer ${studentKey}`, 'content-type': 'application/json' },
        body: `"${'x'.repeat(bytes - 2)}"`,
        from: '127.0.0.5',
      })
    const over = await post(5000)
    expect(over.status).toBe(413)
    expect(over.headers['content-type']).toMatch(/^application\/problem\+json/)
    expect(over.body).toContain('at most 4096 bytes')
    const huge = await post(2 * 1024 * 1024)
    expect(huge.status).toBe(413)
    expect(huge.headers['x-request-id']).toBeUndefined()
  })

  it("takes a roster export of several MiB on the upload page and shows the service's preview", async () => {
    const cookie = (await signIn('127.0.0.6')).session.split(';')[0]!
    const page = await send(true, { path: '/dashboard/operator/roster', headers: { cookie }, from: '127.0.0.6' })
    expect(page.status).toBe(200)
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!
    // A district's export: 2,000 students and, as real exports have, a large enrollments.csv,
    // which the service does not read. Stored, not deflated, so that it is as large on the wire.
    const students = Array.from({ length: 2000 }, (_, i) => ({
      sourcedId: `stu-${i}`,
      role: 'student',
      orgSourcedIds: 'sch-north',
      // A first name is letters only: the number spelled in letters.
      givenName: `Kid${i.toString(26).replace(/./g, (d) => String.fromCharCode(97 + Number.parseInt(d, 26)))}`,
      familyName: 'Surname',
    }))
    const enrollments = Array.from({ length: 60_000 }, (_, i) => ({
      sourcedId: `enr-${i}`,
      status: 'active',
      dateLastModified: '2026-08-20T08:00:00.000Z',
      classSourcedId: `class-${i % 400}-mathematics-period-${i % 7}`,
      schoolSourcedId: 'sch-north',
      userSourcedId: `stu-${i % 2000}`,
      role: 'student',
      primary: 'false',
      beginDate: '2026-08-25',
      endDate: '2027-06-15',
    }))
    const files = {
      'manifest.csv': manifest('1.1', { orgs: 'bulk', users: 'bulk', enrollments: 'bulk' }),
      'orgs.csv': table(ORGS_HEADER, [{ sourcedId: 'sch-north', name: 'North Elementary', type: 'school' }]),
      'users.csv': table(USERS_11_HEADER, students),
      'enrollments.csv': table(ENROLLMENTS_11_HEADER, enrollments),
    }
    const zip = zipBytes(Object.entries(files).map(([name, data]) => ({ name, data, method: 'stored' as const })))
    expect(zip.length).toBeGreaterThan(4 * 1024 * 1024)
    // As a browser sends the form: the CSRF token first, then the tier, then the file.
    const boundary = '----nginxproxytest0upload'
    const field = (name: string, value: string) =>
      `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`
    const body = Buffer.concat([
      Buffer.from(field('_csrf', csrf) + field('tier', 'explorer')),
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="export"; filename="district.zip"\r\n` +
          'Content-Type: application/zip\r\n\r\n',
      ),
      zip,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ])
    const uploaded = await send(true, {
      method: 'POST',
      path: '/dashboard/operator/roster',
      headers: {
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'content-length': String(body.length),
        cookie,
        origin: origin(),
      },
      body,
      from: '127.0.0.6',
    })
    expect(uploaded.status, uploaded.body.slice(uploaded.body.indexOf('<main'), 2000)).toBe(303)
    const preview = await send(true, { path: uploaded.headers.location!, headers: { cookie }, from: '127.0.0.6' })
    expect(preview.status).toBe(200)
    expect(preview.body).toContain('Preview of the roster import')
    expect(preview.body).toMatch(/New students<\/td><td[^>]*>2,000</)

    // The import's other pages keep the site's 1 MiB, as does the rest of the site.
    const confirm = await send(true, {
      method: 'POST',
      path: `${uploaded.headers.location!}/confirm`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie, origin: origin() },
      body: `_csrf=${'x'.repeat(2 * 1024 * 1024)}`,
      from: '127.0.0.6',
    })
    expect(confirm.status).toBe(413)
    expect(confirm.headers['x-request-id']).toBeUndefined()
  })
})
