/**
 * The part of a client address that names one client, for rate limits: an IPv4 address as it
 * is, an IPv6 address by its /64 prefix. One subscriber usually holds a whole /64 (RFC 6177
 * recommends at least a /56 per site), so limiting single IPv6 addresses would let a client
 * reset its limits by changing the lower 64 bits.
 */
import { isIPv6 } from 'node:net'

/** @example addressKey('2001:db8:1:2:aaaa::1') // '2001:db8:1:2::/64' */
export function addressKey(ip: string): string {
  if (!isIPv6(ip)) return ip
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)
  if (mapped !== null) return mapped[1]!
  const [head = '', tail = ''] = ip.toLowerCase().split('::')
  const left = head === '' ? [] : head.split(':')
  const right = ip.includes('::') ? (tail === '' ? [] : tail.split(':')) : []
  const groups = ip.includes('::')
    ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right]
    : left
  return `${groups
    .slice(0, 4)
    .map((group) => group.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`
}
