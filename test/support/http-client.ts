/**
 * Requests sent over a real socket with node:http, answered in the shape of Fastify's inject
 * response: what the HTTP tests send reaches the server as a partner's request would, through
 * the fast path when it is on. The target is the URL as a client library sends it (WHATWG
 * parsing, as inject and fetch do); test/support/raw-http.ts sends unusual bytes as they are.
 */
import http from 'node:http'

export interface HttpRequest {
  method?: string
  url: string
  headers?: Record<string, string | string[] | number | undefined>
  /** An object is sent as JSON (Content-Type application/json unless given); a string or bytes as they are. */
  payload?: unknown
  /** The client address the server is to see: each one is given a loopback address of its own. */
  remoteAddress?: string
}

export interface HttpResponse {
  statusCode: number
  statusMessage: string
  headers: http.IncomingHttpHeaders
  rawPayload: Buffer
  payload: string
  body: string
  // biome-ignore lint/suspicious/noExplicitAny: as inject's json(), read field by field by the tests
  json(): any
}

/**
 * At most this many connections at once to one server from one address: parallel requests
 * beyond it wait for a free connection, below the server's own per-address limit.
 */
const MAX_SOCKETS = 64

const LOOPBACK = /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/

export class HttpClient {
  readonly base: string
  readonly #url: URL
  readonly #agent = new http.Agent({ keepAlive: true, maxSockets: MAX_SOCKETS })
  /** Client addresses asked for, and the loopback address standing for each. */
  readonly #addresses = new Map<string, string>()

  constructor(base: string) {
    this.base = base
    this.#url = new URL(base)
  }

  /**
   * The local address to connect from so that the server sees a client of its own: the server
   * listens on 127.0.0.1, and every 127.x.y.z reaches it, so distinct addresses stay distinct.
   */
  #localAddress(remoteAddress: string | undefined): string | undefined {
    if (remoteAddress === undefined || LOOPBACK.test(remoteAddress)) return remoteAddress
    let local = this.#addresses.get(remoteAddress)
    if (local === undefined) {
      const n = this.#addresses.size + 2
      local = `127.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`
      this.#addresses.set(remoteAddress, local)
    }
    return local
  }

  request(options: HttpRequest): Promise<HttpResponse> {
    // As inject reads its url: a path, or a protocol-relative URL, resolved against the server.
    const url = options.url.startsWith('//')
      ? new URL(`http://localhost${options.url}`)
      : new URL(options.url, 'http://localhost')
    const headers: Record<string, string | string[] | number> = {}
    for (const [name, value] of Object.entries(options.headers ?? {}))
      if (value !== undefined) headers[name.toLowerCase()] = value
    let body: Buffer | string | undefined
    if (options.payload === undefined || options.payload === null) body = undefined
    else if (typeof options.payload === 'string' || Buffer.isBuffer(options.payload)) body = options.payload
    else {
      body = JSON.stringify(options.payload)
      headers['content-type'] ??= 'application/json'
    }
    if (body !== undefined) headers['content-length'] ??= String(Buffer.byteLength(body))
    return new Promise((resolve, reject) => {
      const request = http.request(
        {
          agent: this.#agent,
          host: this.#url.hostname,
          port: this.#url.port,
          localAddress: this.#localAddress(options.remoteAddress),
          method: (options.method ?? 'GET').toUpperCase(),
          path: url.pathname + url.search,
          headers,
        },
        (response) => {
          const chunks: Buffer[] = []
          response.on('data', (chunk: Buffer) => chunks.push(chunk))
          response.on('error', reject)
          response.on('end', () => {
            const rawPayload = Buffer.concat(chunks)
            const payload = rawPayload.toString()
            resolve({
              statusCode: response.statusCode!,
              statusMessage: response.statusMessage ?? '',
              headers: response.headers,
              rawPayload,
              payload,
              body: payload,
              json: () => JSON.parse(payload),
            })
          })
        },
      )
      request.on('error', reject)
      request.end(body)
    })
  }

  /** Closes the kept-alive connections. */
  close(): void {
    this.#agent.destroy()
  }
}
