/** A plausible e-mail address: something@something.tld, at most 254 characters (RFC 5321). */
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

export function isEmail(value: string): boolean {
  return value.length <= 254 && EMAIL.test(value)
}

/**
 * Characters that would make an address more than one mailbox, or a name and an address, when a
 * mail library reads it (`a@x.org, b@y.org`, `Name <a@x.org>`), or break a header line.
 */
const NOT_ONE_MAILBOX = /[\p{Cc},;:<>()[\]"\\]/u

/** One plain mailbox the outbox may send to: an e-mail address and nothing else, so never a list. */
export function isMailRecipient(value: string): boolean {
  return isEmail(value) && !NOT_ONE_MAILBOX.test(value)
}
