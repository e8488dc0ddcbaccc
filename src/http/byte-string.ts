/**
 * A body as bytes, one character each (latin1), made once and sent as it is: its length is its
 * byte length, the Content-Length the fast path sends.
 */
export type ByteString = string & { readonly [BYTES]: true }
declare const BYTES: unique symbol

const ASCII = /^[\x00-\x7f]*$/

/** The UTF-8 bytes of `text` as a ByteString (the text itself when it is ASCII). */
export function byteString(text: string): ByteString {
  return (ASCII.test(text) ? text : Buffer.from(text, 'utf8').toString('latin1')) as ByteString
}
