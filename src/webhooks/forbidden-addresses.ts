/**
 * Where a webhook may not go (OWASP API7, server-side request forgery): a partner's endpoint URL
 * must not turn this service into a client of its own network. Every address a host name
 * resolves to is checked, and the connection is made to the checked address itself, so a DNS
 * answer that changes between the check and the connection (rebinding) cannot slip through.
 */
import { BlockList, isIP } from 'node:net'

const forbidden = new BlockList()
// IPv4: this network, private, carrier-grade NAT, loopback, link-local (cloud metadata at
// 169.254.169.254), IETF protocol assignments, documentation, benchmarking, multicast, reserved.
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  forbidden.addSubnet(network, prefix, 'ipv4')
}
// IPv6: IPv4-compatible (unspecified and loopback within it), IPv4-translated, discard, Teredo,
// 6to4, unique local, link-local, site-local, multicast, documentation. The tunnelling ranges
// carry an IPv4 address that a relay may deliver to, so they are refused whole. (Not
// ::ffff:0:0/96: a BlockList matches IPv4 addresses against it; isForbiddenAddress refuses it.)
for (const [network, prefix] of [
  ['::', 96],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 32],
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
  ['2001:db8::', 32],
] as const) {
  forbidden.addSubnet(network, prefix, 'ipv6')
}

const loopback = new BlockList()
loopback.addSubnet('127.0.0.0', 8, 'ipv4')
loopback.addAddress('::1', 'ipv6')

export function isLoopback(address: string): boolean {
  const family = isIP(address)
  return family !== 0 && loopback.check(address, family === 4 ? 'ipv4' : 'ipv6')
}

/**
 * Whether a webhook may connect to `address`. `allowLoopback` (local development and tests
 * only) lets loopback through and nothing else.
 */
export function isForbiddenAddress(address: string, allowLoopback = false): boolean {
  const family = isIP(address)
  if (family === 0) return true
  if (allowLoopback && isLoopback(address)) return false
  if (family === 6) {
    // An IPv4-mapped address is refused whole (whatever it carries, it is a way round the list).
    if (/^::ffff:/i.test(address)) return true
    return forbidden.check(address, 'ipv6')
  }
  return forbidden.check(address, 'ipv4')
}
