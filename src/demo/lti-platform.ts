/**
 * A learning platform written for the tests (LTI 1.3 Advantage, Dynamic Registration 1.0): a
 * Fastify server on 127.0.0.1:0 with its OpenID configuration, a registration endpoint, its key
 * set, the authorization redirect that answers a login with an id_token, a token endpoint that
 * checks the tool's client assertion against the tool's key set, line items and scores that
 * check what they get and fail on demand, and a deep-linking return that checks the tool's JWT.
 *
 * It records what it got, so tests assert on what the tool sent rather than on the tool's word.
 */
import { randomUUID } from 'node:crypto'
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify'
import { createRemoteJWKSet, exportJWK, generateKeyPair, type JWK, type JWTPayload, jwtVerify, SignJWT } from 'jose'
import {
  AGS_SCOPE,
  CLAIM,
  LTI_VERSION,
  MESSAGE,
  PLATFORM_CONFIGURATION,
  ROLE,
  SCORE_MEDIA_TYPE,
  TOOL_CONFIGURATION,
} from '../domain/lti-claims.js'

type KeyPair = Awaited<ReturnType<typeof generateKeyPair>>

export interface PlatformOptions {
  /**
   * The platform's issuer; by default its own origin. Hosted Canvas's is `https://canvas.instructure.com`
   * while its endpoints are elsewhere: an issuer that is no host of ours tests that.
   */
  issuer?: string
  /** `lti_platform_configuration.product_family_code`. */
  product?: string
  /**
   * The host its configuration names in its authorization, token and key set URLs (on its own
   * port): endpoints on another host than the issuer's, as hosted Canvas's are.
   */
  endpointHost?: string
  /** Where it listens: 127.0.0.1 and a free port unless given (the demo's command names one). */
  host?: string
  port?: number
}

/** An answer a test puts in place of the platform's own: a status and a body (a string is sent as it is). */
export interface SubstituteAnswer {
  status: number
  body: unknown
  contentType?: string
}

export interface ToolRegistration {
  /** What the tool posted to the registration endpoint. */
  request: Record<string, unknown>
  clientId: string
  deploymentId: string
}

export interface ReceivedScore {
  lineItem: string
  contentType: string | undefined
  authorization: string | undefined
  body: Record<string, unknown>
}

/** A lesson the tool's deep-linking answer placed in the course, and the line item made for it. */
export interface PlacedLink {
  id: string
  title: string
  /** The content item's `custom` (the tool puts the lesson's slug in `custom.lesson`). */
  custom: Record<string, string>
  lineItem: string | null
}

export interface ReceivedToken {
  assertion: JWTPayload
  header: Record<string, unknown>
  scope: string
}

/** What `authorize` answers a login with: the claims of the id_token (defaults filled by `launchClaims`). */
export type LaunchClaims = Record<string, unknown>

export class TestPlatform {
  readonly app: FastifyInstance
  origin = ''
  issuer = ''
  readonly product: string
  /** The platform's own signing key, and a stranger's (for a token signed by another key). */
  keys!: KeyPair
  strangerKeys!: KeyPair
  readonly kid = `platform-${randomUUID().slice(0, 8)}`
  /** The registration tokens the registration endpoint accepts (one is made by `registrationUrl`). */
  readonly registrationTokens = new Set<string>()
  readonly registrations: ToolRegistration[] = []
  /** Logins received at the authorization endpoint, as sent. */
  readonly logins: Record<string, string>[] = []
  readonly tokens: ReceivedToken[] = []
  readonly scores: ReceivedScore[] = []
  readonly lineItems: Record<string, unknown>[] = []
  readonly deepLinkResponses: { jwt: string; payload: JWTPayload }[] = []
  /** The resource links the deep-linking answers placed in the course, in order. */
  readonly placedLinks: PlacedLink[] = []
  /** Key set fetches, to see that the tool caches and refreshes. */
  jwksFetches = 0
  /** Statuses the score endpoint answers next, in order (then 200). */
  scoreFailures: (number | 'reset')[] = []
  /** Statuses the token endpoint answers next, in order (then 200). */
  tokenFailures: number[] = []
  /** Access tokens the score endpoint refuses with 401 once (as if expired). */
  readonly expiredTokens = new Set<string>()
  /** The claims the next login's id_token carries, made by the test; `launchClaims` fills the rest. */
  nextLaunch: (login: Record<string, string>) => Promise<LaunchClaims> | LaunchClaims = () => ({})
  /** The Authorization header of each request for the OpenID configuration. */
  readonly configurationFetches: (string | undefined)[] = []
  /** Set by a test: what the configuration endpoint answers instead, given the configuration. */
  answerConfiguration: ((configuration: Record<string, unknown>) => SubstituteAnswer) | undefined
  /** Set by a test: what the registration endpoint answers instead, given the request and its own answer. */
  answerRegistration:
    | ((request: Record<string, unknown>, answer: Record<string, unknown>) => SubstituteAnswer)
    | undefined
  readonly endpointHost: string | undefined
  readonly listenOn: { host: string; port: number }
  /** The platform's OpenID configuration as its endpoint answers it. */
  configuration: () => Record<string, unknown> = () => ({})
  /** Where the tool's key set is (set by `registrationUrl` or by hand for manual registrations). */
  toolJwksUri = ''
  /**
   * The platform's "now" (milliseconds): the time the token endpoint checks assertions at, its
   * id_tokens' times and the check of the tool's deep-linking JWT; the tool's clock, when a test runs one.
   */
  now: () => number = () => Date.now()
  /** The access tokens the token endpoint gave; the score endpoint takes no other. */
  readonly issuedTokens = new Set<string>()
  clientId = `client-${randomUUID().slice(0, 8)}`
  deploymentId = `deployment-${randomUUID().slice(0, 8)}`
  /** More keys the key set publishes besides the platform's own (a rotation: the new key under its kid). */
  readonly additionalKeys: { kid: string; keys: KeyPair }[] = []
  #toolJwks: ReturnType<typeof createRemoteJWKSet> | undefined

  constructor(options: PlatformOptions = {}) {
    this.product = options.product ?? 'test-platform'
    if (options.issuer !== undefined) this.issuer = options.issuer
    this.endpointHost = options.endpointHost
    this.listenOn = { host: options.host ?? '127.0.0.1', port: options.port ?? 0 }
    this.app = Fastify({ logger: false })
  }

  async start(): Promise<this> {
    this.keys = await generateKeyPair('RS256', { extractable: true })
    this.strangerKeys = await generateKeyPair('RS256', { extractable: true })
    this.app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) =>
      done(null, Object.fromEntries(new URLSearchParams(String(body)))),
    )
    this.routes()
    this.registrationPage()
    this.origin = await this.app.listen(this.listenOn)
    if (this.issuer === '') this.issuer = this.origin
    return this
  }

  async stop(): Promise<void> {
    await this.app.close()
  }

  /** The platform's OpenID configuration URL. */
  get configurationUrl(): string {
    return `${this.origin}/.well-known/openid-configuration`
  }

  /** The URL a platform opens to register a tool: the tool's registration URL with the two parameters. */
  registrationUrl(toolRegistrationUrl: string): string {
    const token = `reg-${randomUUID()}`
    this.registrationTokens.add(token)
    const url = new URL(toolRegistrationUrl)
    url.searchParams.set('openid_configuration', this.configurationUrl)
    url.searchParams.set('registration_token', token)
    return url.toString()
  }

  /** The values a manual registration asks for. */
  manualValues(): {
    issuer: string
    clientId: string
    deploymentId: string
    authLoginUrl: string
    tokenUrl: string
    jwksUri: string
  } {
    return {
      issuer: this.issuer,
      clientId: this.clientId,
      deploymentId: this.deploymentId,
      authLoginUrl: `${this.origin}/authorize`,
      tokenUrl: `${this.origin}/token`,
      jwksUri: `${this.origin}/jwks`,
    }
  }

  async publicJwk(): Promise<JWK> {
    return { ...(await exportJWK(this.keys.publicKey)), kid: this.kid, alg: 'RS256', use: 'sig' }
  }

  /**
   * The claims of a learner's resource-link launch for the tool at `toolBase`, with `overrides`
   * merged over them (a value `undefined` removes the claim).
   */
  launchClaims(toolBase: string, overrides: LaunchClaims = {}): LaunchClaims {
    const claims: LaunchClaims = {
      sub: 'learner-1',
      given_name: 'Ada',
      [CLAIM.messageType]: MESSAGE.resourceLink,
      [CLAIM.version]: LTI_VERSION,
      [CLAIM.deploymentId]: this.deploymentId,
      [CLAIM.targetLinkUri]: `${toolBase}/lti/launch`,
      [CLAIM.resourceLink]: { id: 'resource-link-1' },
      [CLAIM.roles]: [ROLE.learner],
      [CLAIM.context]: { id: 'course-1', label: 'CS 101', title: 'Computing for everyone', type: [] },
      [CLAIM.ags]: {
        scope: [AGS_SCOPE.lineItem, AGS_SCOPE.score],
        lineitems: `${this.origin}/contexts/course-1/lineitems`,
        lineitem: `${this.origin}/contexts/course-1/lineitems/1`,
      },
    }
    for (const [name, value] of Object.entries(overrides)) {
      if (value === undefined) delete claims[name]
      else claims[name] = value
    }
    return claims
  }

  /**
   * An id_token: the claims, signed by the platform's key (or `options.key`), with iss, aud, iat,
   * exp and nonce filled unless given.
   */
  async idToken(
    claims: LaunchClaims,
    options: { nonce?: string; key?: KeyPair; kid?: string; alg?: string; now?: number } = {},
  ): Promise<string> {
    const now = Math.floor((options.now ?? this.now()) / 1000)
    const payload: JWTPayload = {
      iss: this.issuer,
      aud: this.clientId,
      iat: now,
      exp: now + 300,
      ...(options.nonce === undefined ? {} : { nonce: options.nonce }),
      ...claims,
    }
    for (const [name, value] of Object.entries(payload)) if (value === undefined) delete payload[name]
    return new SignJWT(payload)
      .setProtectedHeader({ alg: options.alg ?? 'RS256', kid: options.kid ?? this.kid, typ: 'JWT' })
      .sign((options.key ?? this.keys).privateKey)
  }

  /** Fails the next score posts with these statuses. */
  failScores(...statuses: number[]): void {
    this.scoreFailures.push(...statuses)
  }

  private toolKeySet(): ReturnType<typeof createRemoteJWKSet> {
    this.#toolJwks ??= createRemoteJWKSet(new URL(this.toolJwksUri))
    return this.#toolJwks
  }

  /** The origin its configuration names its authorization, token and key set endpoints on. */
  get endpointOrigin(): string {
    if (this.endpointHost === undefined) return this.origin
    const url = new URL(this.origin)
    url.hostname = this.endpointHost
    return url.origin
  }

  /**
   * A page of the platform (an origin other than the tool's) that opens the tool's registration URL
   * in an iframe, as Canvas does, and shows in `#closed` the message the tool posts back to it.
   */
  registrationPageUrl(toolRegistrationUrl: string): string {
    return `${this.origin}/register-tool?url=${encodeURIComponent(this.registrationUrl(toolRegistrationUrl))}`
  }

  private registrationPage(): void {
    this.app.get('/register-tool', async (request, reply) => {
      const url = (request.query as Record<string, string>).url ?? ''
      const escaped = url.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
      return reply
        .type('text/html')
        .send(
          '<!doctype html><title>Platform: register a tool</title><p id="closed"></p>' +
            `<iframe id="tool" title="Tool registration" src="${escaped}" width="600" height="400"></iframe>` +
            '<script>window.addEventListener("message",function(e){if(e.data&&e.data.subject)' +
            '{document.getElementById("closed").textContent=e.data.subject+" from "+e.origin}})</script>',
        )
    })
  }

  /** Each `ltiResourceLink` content item becomes a resource link of the course, with a line item if it asks for one. */
  private placeContentItems(items: unknown): void {
    if (!Array.isArray(items)) return
    for (const item of items as Record<string, unknown>[]) {
      if (item.type !== 'ltiResourceLink') continue
      const id = `link-${this.placedLinks.length + 1}`
      let lineItem: string | null = null
      if (typeof item.lineItem === 'object' && item.lineItem !== null) {
        lineItem = `${this.origin}/contexts/course-1/lineitems/${id}`
        this.lineItems.push({ ...(item.lineItem as Record<string, unknown>), id: lineItem, resourceLinkId: id })
      }
      const custom = typeof item.custom === 'object' && item.custom !== null ? item.custom : {}
      this.placedLinks.push({
        id,
        title: typeof item.title === 'string' ? item.title : id,
        custom: custom as Record<string, string>,
        lineItem,
      })
    }
  }

  private substitute(reply: FastifyReply, answer: SubstituteAnswer): FastifyReply {
    reply.code(answer.status)
    if (typeof answer.body === 'string') return reply.type(answer.contentType ?? 'application/json').send(answer.body)
    return reply.send(answer.body)
  }

  private routes(): void {
    const app = this.app
    app.get('/.well-known/openid-configuration', async (request, reply) => {
      this.configurationFetches.push(request.headers.authorization)
      const configuration = this.configuration()
      return this.answerConfiguration === undefined
        ? configuration
        : this.substitute(reply, this.answerConfiguration(configuration))
    })
    // Dynamic Registration 1.0 section 3.4.
    const configurationOf = (): Record<string, unknown> => ({
      issuer: this.issuer,
      authorization_endpoint: `${this.endpointOrigin}/authorize`,
      token_endpoint: `${this.endpointOrigin}/token`,
      token_endpoint_auth_methods_supported: ['private_key_jwt'],
      token_endpoint_auth_signing_alg_values_supported: ['RS256'],
      jwks_uri: `${this.endpointOrigin}/jwks`,
      registration_endpoint: `${this.origin}/register`,
      scopes_supported: ['openid', AGS_SCOPE.lineItem, AGS_SCOPE.score, AGS_SCOPE.result],
      response_types_supported: ['id_token'],
      subject_types_supported: ['public', 'pairwise'],
      id_token_signing_alg_values_supported: ['RS256'],
      claims_supported: ['iss', 'aud', 'sub', 'given_name', 'family_name', 'name', 'email'],
      [PLATFORM_CONFIGURATION]: {
        product_family_code: this.product,
        version: '1.0',
        messages_supported: [{ type: MESSAGE.resourceLink }, { type: MESSAGE.deepLinkingRequest }],
        variables: [],
      },
    })
    this.configuration = configurationOf

    app.post('/register', async (request, reply) => {
      const token = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1]
      if (token === undefined || !this.registrationTokens.has(token))
        return reply.code(401).send({ error: 'invalid_token' })
      this.registrationTokens.delete(token)
      const body = request.body as Record<string, unknown>
      const problem = registrationProblem(body)
      if (problem !== undefined)
        return reply.code(400).send({ error: 'invalid_client_metadata', error_description: problem })
      this.toolJwksUri = String(body.jwks_uri)
      this.#toolJwks = undefined
      const registration = { request: body, clientId: this.clientId, deploymentId: this.deploymentId }
      this.registrations.push(registration)
      const tool = body[TOOL_CONFIGURATION] as Record<string, unknown>
      const answer = {
        ...body,
        client_id: this.clientId,
        [TOOL_CONFIGURATION]: { ...tool, deployment_id: this.deploymentId },
      }
      if (this.answerRegistration !== undefined) return this.substitute(reply, this.answerRegistration(body, answer))
      return reply.code(201).send(answer)
    })

    app.get('/jwks', async () => {
      this.jwksFetches++
      const more = await Promise.all(
        this.additionalKeys.map(async ({ kid, keys }) => ({
          ...(await exportJWK(keys.publicKey)),
          kid,
          alg: 'RS256',
          use: 'sig',
        })),
      )
      return { keys: [await this.publicJwk(), ...more] }
    })

    // The login's redirect: the user's browser arrives here; the platform answers with a form
    // that posts the id_token to the tool, as a real platform does.
    app.get('/authorize', async (request, reply) => {
      const login = request.query as Record<string, string>
      this.logins.push(login)
      const claims = await this.nextLaunch(login)
      const idToken = await this.idToken(claims, { nonce: login.nonce })
      return reply
        .type('text/html')
        .send(autoPost(login.redirect_uri ?? '', { id_token: idToken, state: login.state ?? '' }))
    })

    app.post('/token', async (request, reply) => {
      const failure = this.tokenFailures.shift()
      if (failure !== undefined) return reply.code(failure).send({ error: 'temporarily_unavailable' })
      const form = request.body as Record<string, string>
      if (form.grant_type !== 'client_credentials') return reply.code(400).send({ error: 'unsupported_grant_type' })
      if (form.client_assertion_type !== 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer')
        return reply.code(400).send({ error: 'invalid_request' })
      try {
        const { payload, protectedHeader } = await jwtVerify(form.client_assertion ?? '', this.toolKeySet(), {
          issuer: this.clientId,
          subject: this.clientId,
          audience: `${this.origin}/token`,
          algorithms: ['RS256'],
          currentDate: new Date(this.now()),
        })
        if (typeof payload.jti !== 'string' || this.tokens.some((t) => t.assertion.jti === payload.jti))
          return reply.code(400).send({ error: 'invalid_grant', error_description: 'jti missing or used' })
        if ((payload.exp ?? 0) - (payload.iat ?? 0) > 600)
          return reply.code(400).send({ error: 'invalid_grant', error_description: 'assertion lives too long' })
        this.tokens.push({
          assertion: payload,
          header: protectedHeader as Record<string, unknown>,
          scope: form.scope ?? '',
        })
      } catch (error) {
        return reply.code(401).send({ error: 'invalid_client', error_description: String(error) })
      }
      const accessToken = `access-${randomUUID()}`
      this.issuedTokens.add(accessToken)
      return { access_token: accessToken, token_type: 'Bearer', expires_in: 3600, scope: form.scope }
    })

    const scoreContentType = (type: string | undefined) => type?.split(';')[0]?.trim()
    app.addContentTypeParser(SCORE_MEDIA_TYPE, { parseAs: 'string' }, (_request, body, done) => {
      try {
        done(null, JSON.parse(String(body)))
      } catch (error) {
        done(error as Error, undefined)
      }
    })
    app.post('/contexts/:context/lineitems', async (request, reply) => {
      const item = {
        ...(request.body as Record<string, unknown>),
        id: `${this.origin}${request.url}/${this.lineItems.length + 100}`,
      }
      this.lineItems.push(item)
      return reply.code(201).send(item)
    })
    app.post('/contexts/:context/lineitems/:item/scores', async (request, reply) => {
      const authorization = request.headers.authorization
      const token = /^Bearer (.+)$/.exec(authorization ?? '')?.[1]
      if (token === undefined || !this.issuedTokens.has(token)) return reply.code(401).send({ error: 'no token' })
      if (this.expiredTokens.delete(token)) return reply.code(401).send({ error: 'token expired' })
      const failure = this.scoreFailures.shift()
      if (failure === 'reset') {
        reply.hijack()
        request.raw.socket.destroy()
        return
      }
      if (failure !== undefined) return reply.code(failure).send({ error: `failing on demand with ${failure}` })
      if (scoreContentType(request.headers['content-type']) !== SCORE_MEDIA_TYPE)
        return reply.code(415).send({ error: 'score media type expected' })
      const body = request.body as Record<string, unknown>
      const problem = scoreProblem(body)
      if (problem !== undefined) return reply.code(400).send({ error: problem })
      const lineItem = `${this.origin}${request.url.replace(/\/scores$/, '')}`
      this.scores.push({ lineItem, contentType: request.headers['content-type'], authorization, body })
      return reply.code(200).send({})
    })

    app.post('/deep-link-return', async (request, reply) => {
      const jwt = (request.body as Record<string, string>).JWT ?? ''
      try {
        const { payload } = await jwtVerify(jwt, this.toolKeySet(), {
          issuer: this.clientId,
          audience: this.issuer,
          algorithms: ['RS256'],
          currentDate: new Date(this.now()),
        })
        this.deepLinkResponses.push({ jwt, payload })
        this.placeContentItems(payload[CLAIM.contentItems])
        return reply
          .type('text/html')
          .send(
            '<!doctype html><html lang="en"><title>Added</title><p id="added">Content added</p>' +
              '<p><a href="/" target="_top">Back to the course</a></p></html>',
          )
      } catch (error) {
        return reply.code(400).send({ error: String(error) })
      }
    })
  }
}

/** What a registration request lacks, by Dynamic Registration 1.0 section 3.3; undefined when well formed. */
function registrationProblem(body: Record<string, unknown>): string | undefined {
  const tool = body[TOOL_CONFIGURATION] as Record<string, unknown> | undefined
  if (body.application_type !== 'web') return 'application_type must be web'
  if (!Array.isArray(body.response_types) || !body.response_types.includes('id_token')) return 'response_types'
  if (
    !Array.isArray(body.grant_types) ||
    !['implicit', 'client_credentials'].every((g) => (body.grant_types as string[]).includes(g))
  )
    return 'grant_types'
  if (typeof body.initiate_login_uri !== 'string') return 'initiate_login_uri'
  if (!Array.isArray(body.redirect_uris) || body.redirect_uris.length === 0) return 'redirect_uris'
  if (typeof body.client_name !== 'string') return 'client_name'
  if (typeof body.jwks_uri !== 'string') return 'jwks_uri'
  if (body.token_endpoint_auth_method !== 'private_key_jwt') return 'token_endpoint_auth_method'
  if (tool === undefined || typeof tool.domain !== 'string' || typeof tool.target_link_uri !== 'string')
    return 'tool configuration'
  return undefined
}

/** What a score lacks, by AGS 2.0's score service; undefined when well formed. */
function scoreProblem(body: Record<string, unknown>): string | undefined {
  if (typeof body.userId !== 'string') return 'userId'
  if (typeof body.timestamp !== 'string' || Number.isNaN(Date.parse(body.timestamp))) return 'timestamp'
  if (!['Initialized', 'Started', 'InProgress', 'Submitted', 'Completed'].includes(String(body.activityProgress)))
    return 'activityProgress'
  if (!['FullyGraded', 'Pending', 'PendingManual', 'Failed', 'NotReady'].includes(String(body.gradingProgress)))
    return 'gradingProgress'
  if ((body.scoreGiven === undefined) !== (body.scoreMaximum === undefined)) return 'scoreGiven needs scoreMaximum'
  return undefined
}

function autoPost(action: string, fields: Record<string, string>): string {
  const escaped = (value: string) => value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
  const inputs = Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${escaped(name)}" value="${escaped(value)}">`)
    .join('')
  return (
    `<!doctype html><title>Launching</title><form id="launch" method="post" action="${escaped(action)}">` +
    `${inputs}<button>Continue</button></form><script>document.getElementById('launch').submit()</script>`
  )
}

/** The hidden fields and action of an auto-posting form (as the tool or the platform answered it). */
export function formOf(page: string): { action: string; fields: Record<string, string> } {
  const unescaped = (value: string) =>
    value
      .replace(/&#(\d+);/g, (_m, code: string) => String.fromCharCode(Number(code)))
      .replace(/&quot;/g, '"')
      .replace(/&#x27;/g, "'")
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&')
  const action = /<form[^>]*action="([^"]*)"/.exec(page)?.[1]
  if (action === undefined) throw new Error(`no form in ${page.slice(0, 200)}`)
  const fields: Record<string, string> = {}
  for (const match of page.matchAll(/<input[^>]*type="hidden"[^>]*>/g)) {
    const name = /name="([^"]*)"/.exec(match[0])?.[1]
    const value = /value="([^"]*)"/.exec(match[0])?.[1]
    if (name !== undefined) fields[unescaped(name)] = unescaped(value ?? '')
  }
  return { action: unescaped(action), fields }
}
