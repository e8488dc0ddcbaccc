/** Client addresses as rate-limit keys: IPv6 by /64, so rotating the lower bits does not reset a limit. */
import { describe, expect, it } from 'vitest'
import { addressKey } from '../../src/domain/client-address.js'

describe('addressKey', () => {
  it('keeps IPv4 addresses and groups IPv6 addresses by /64', () => {
    expect(addressKey('192.0.2.10')).toBe('192.0.2.10')
    expect(addressKey('::ffff:192.0.2.10')).toBe('192.0.2.10')
    expect(addressKey('2001:db8:1:2:aaaa:bbbb:cccc:dddd')).toBe('2001:db8:1:2::/64')
    expect(addressKey('2001:0db8:0001:0002::1')).toBe('2001:db8:1:2::/64')
    expect(addressKey('2001:db8::1')).toBe('2001:db8:0:0::/64')
    expect(addressKey('::1')).toBe('0:0:0:0::/64')
    expect(addressKey('2001:DB8:1:2::9')).toBe(addressKey('2001:db8:1:2:ffff::'))
  })
})
