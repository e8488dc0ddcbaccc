/** A plausible e-mail address: something@something.tld, at most 254 characters (RFC 5321). */
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

export function isEmail(value: string): boolean {
  return value.length <= 254 && EMAIL.test(value)
}
