/**
 * One delivery attempt: a POST to the endpoint, with the SSRF rules applied at the moment of
 * sending. Every address the host resolves to must be allowed, and the connection goes to that
 * checked address (the request's `lookup` returns it), so the name cannot be re-resolved to an
 * internal address in between. Redirects are not followed (a 3xx is a failed attempt), the whole
 * attempt has one deadline, and at most 1 KB of the answer is kept.
 */
import { promises as dns, type LookupAddress } from 'node:dns'
import http from 'node:http'
import https from 'node:https'
import { isIP } from 'node:net'
import type { AttemptRecord } from '../storage/webhook-outbox-repository.js'
import { isForbiddenAddress } from './forbidden-addresses.js'

export const KEPT_RESPONSE_BYTES = 1024

export interface SendOptions {
  timeoutMs: number
  allowLoopback: boolean
  /** Name resolution (tests substitute it); every address is checked. */
  resolve?: (host: string) => Promise<LookupAddress[]>
  /** Aborted when the server stops: the attempt is cut short. */
  stopping?: AbortSignal
}

const systemResolve = (host: string) => dns.lookup(host, { all: true, verbatim: true })

export async function sendWebhook(
  url: URL,
  headers: Record<string, string>,
  body: string,
  options: SendOptions,
): Promise<AttemptRecord> {
  const started = performance.now()
  const failed = (error: string): AttemptRecord => ({
    ok: false,
    status: null,
    latencyMs: Math.round(performance.now() - started),
    error,
    response: '',
    bodySent: false,
  })
  const host = url.hostname.replace(/^\[|\]$/g, '')
  let addresses: LookupAddress[] = []
  try {
    addresses =
      isIP(host) !== 0 ? [{ address: host, family: isIP(host) }] : await (options.resolve ?? systemResolve)(host)
  } catch {
    // As for an internal address below: one answer for both.
  }
  // One message, naming no address, whether the name resolves to an internal address or not at
  // all: the delivery log must not let a partner map names inside our network.
  if (addresses.length === 0 || addresses.some((entry) => isForbiddenAddress(entry.address, options.allowLoopback)))
    return failed('refused: the host does not resolve to a public address')
  const target = addresses[0]!
  const client = url.protocol === 'https:' ? https : http
  return new Promise<AttemptRecord>((resolve) => {
    let bodySent = false
    const request = client.request(
      url,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        signal:
          options.stopping === undefined
            ? AbortSignal.timeout(options.timeoutMs)
            : AbortSignal.any([AbortSignal.timeout(options.timeoutMs), options.stopping]),
        agent: false,
        lookup: (_name, lookupOptions, callback) => {
          const all = (lookupOptions as { all?: boolean }).all === true
          if (all) (callback as (e: null, a: LookupAddress[]) => void)(null, [target])
          else (callback as (e: null, a: string, f: number) => void)(null, target.address, target.family)
        },
      },
      (response) => {
        const chunks: Buffer[] = []
        let kept = 0
        response.on('data', (chunk: Buffer) => {
          if (kept < KEPT_RESPONSE_BYTES) {
            chunks.push(chunk.subarray(0, KEPT_RESPONSE_BYTES - kept))
            kept += chunk.length
          }
          // Nothing more is needed; a large or endless answer is cut off.
          if (kept >= KEPT_RESPONSE_BYTES) response.destroy()
        })
        const finish = () => {
          const status = response.statusCode ?? null
          resolve({
            ok: status !== null && status >= 200 && status < 300,
            status,
            latencyMs: Math.round(performance.now() - started),
            error: null,
            response: Buffer.concat(chunks).toString('utf8').slice(0, KEPT_RESPONSE_BYTES),
            bodySent: true,
          })
        }
        response.on('end', finish)
        response.on('close', finish)
        response.on('error', () => {})
      },
    )
    // Emitted once the last of the body is handed to the connection.
    request.on('finish', () => {
      bodySent = true
    })
    request.on('error', (error: NodeJS.ErrnoException) => {
      const aborted = error.name === 'AbortError' || error.name === 'TimeoutError'
      const reason = options.stopping?.aborted ? 'cut short: the server stopped' : 'timed out'
      resolve({ ...failed(aborted ? reason : (error.code ?? error.message)), bodySent })
    })
    request.end(body)
  })
}
