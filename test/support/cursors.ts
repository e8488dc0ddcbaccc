/** Cursors as the service first gave them out, in clear: what partners may still hold. */
import { createHash } from 'node:crypto'

/** A cursor of the first form: base64url of `<kind>.<position>.<check>`. */
export function legacyCursor(body: string): string {
  const check = createHash('sha256').update(body).digest('hex').slice(0, 8)
  return Buffer.from(`${body}.${check}`).toString('base64url')
}

/** What a cursor shows to whoever decodes it: `<kind>.<position>` when it is in clear. */
export function bodyInClear(cursor: string): string | undefined {
  return /^((?:students|changes)\.[^.]+)\.[0-9a-f]{8}$/.exec(Buffer.from(cursor, 'base64url').toString('latin1'))?.[1]
}
