/**
 * Where a scraper reads the metrics: `GET /metrics` on the main port behind METRICS_TOKEN, or a
 * listener of its own on METRICS_PORT that serves nothing else. Off (404, as any unknown path)
 * when neither is set. The route stays out of the OpenAPI document: it is the operator's, not a
 * partner's, and a partner's key never opens it.
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import http from 'node:http'
import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { ProblemError } from '../errors.js'

/** What a scrape answers: the text and its content type. */
export type Scrape = () => Promise<{ text: string; contentType: string }>

const METRICS_PATH = '/metrics'

/** Compares digests, so that neither the token's length nor its bytes leak through timing. */
function tokenMatcher(token: string): (presented: string) => boolean {
  const expected = createHash('sha256').update(token).digest()
  return (presented) => timingSafeEqual(createHash('sha256').update(presented).digest(), expected)
}

/** `GET /metrics` on the app, answered only with `Authorization: Bearer <token>`. */
export function metricsRoute(app: FastifyInstance, token: string, scrape: Scrape): void {
  const matches = tokenMatcher(token)
  const challenge = { 'www-authenticate': 'Bearer realm="metrics"' }
  app.get(
    METRICS_PATH,
    {
      schema: {
        hide: true,
        headers: Type.Object({ authorization: Type.Optional(Type.String()) }),
      },
    },
    async (request, reply) => {
      const header = request.headers.authorization
      const presented = header?.startsWith('Bearer ') ? header.slice('Bearer '.length).trim() : undefined
      if (presented === undefined)
        throw new ProblemError(
          'api_key_missing',
          'Send the metrics token as "Authorization: Bearer <METRICS_TOKEN>".',
          {
            headers: challenge,
          },
        )
      if (!matches(presented))
        throw new ProblemError('api_key_invalid', "The bearer token is not this service's METRICS_TOKEN.", {
          headers: { 'www-authenticate': 'Bearer realm="metrics", error="invalid_token"' },
        })
      const { text, contentType } = await scrape()
      return reply.header('cache-control', 'no-store').type(contentType).send(text)
    },
  )
}

/**
 * A listener on `port` and `host` that answers `GET /metrics` and nothing else (404). Resolves
 * once it listens, with its address and a close function.
 */
export async function listenForScrapes(
  port: number,
  host: string,
  scrape: Scrape,
): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer((request, response) => {
    const path = request.url?.split('?')[0]
    if (path !== METRICS_PATH || (request.method !== 'GET' && request.method !== 'HEAD')) {
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found: only GET /metrics\n')
      return
    }
    scrape().then(
      ({ text, contentType }) => {
        response.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' })
        response.end(request.method === 'HEAD' ? undefined : text)
      },
      (error: unknown) => {
        response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' })
        response.end(`metrics unavailable: ${error instanceof Error ? error.message : String(error)}\n`)
      },
    )
  })
  // A scraper holds its connection between scrapes; none should keep the process from closing.
  server.keepAliveTimeout = 5000
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => resolve())
  })
  const address = server.address()
  return {
    port: typeof address === 'object' && address !== null ? address.port : port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}
