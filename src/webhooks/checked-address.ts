/**
 * The address an outgoing request may connect to (webhooks and requests to learning platforms):
 * every address the host resolves to must be allowed (forbidden-addresses.ts), and the connection
 * goes to the checked one through `pinnedLookup`, so that the name cannot be resolved again to an
 * internal address in between (DNS rebinding).
 */
import { promises as dns, type LookupAddress } from 'node:dns'
import { isIP } from 'node:net'
import type { LookupFunction } from 'node:net'
import { isForbiddenAddress } from './forbidden-addresses.js'

export type Resolve = (host: string) => Promise<LookupAddress[]>

const systemResolve: Resolve = (host) => dns.lookup(host, { all: true, verbatim: true })

/** The address to connect to for `url`, or undefined when the host resolves to none or to one not allowed. */
export async function checkedAddress(
  url: URL,
  allowLoopback: boolean,
  resolve: Resolve = systemResolve,
): Promise<LookupAddress | undefined> {
  const host = url.hostname.replace(/^\[|\]$/g, '')
  let addresses: LookupAddress[] = []
  try {
    addresses = isIP(host) !== 0 ? [{ address: host, family: isIP(host) }] : await resolve(host)
  } catch {
    // As for an internal address: one answer for both, naming no address.
  }
  if (addresses.length === 0 || addresses.some((entry) => isForbiddenAddress(entry.address, allowLoopback)))
    return undefined
  return addresses[0]
}

/** A `lookup` for http.request that answers `target` whatever it is asked. */
export function pinnedLookup(target: LookupAddress): LookupFunction {
  return (_name, options, callback) => {
    if ((options as { all?: boolean }).all === true) (callback as (e: null, a: LookupAddress[]) => void)(null, [target])
    else (callback as (e: null, a: string, f: number) => void)(null, target.address, target.family)
  }
}
