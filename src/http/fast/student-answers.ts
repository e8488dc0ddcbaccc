/** What the fast path's two student requests (progress.ts, enroll.ts) share: their URLs, their outcome, the access. */
import type { KeyRecord } from '../../domain/api-key.js'
import { UUID } from '../../domain/uuid.js'
import type { Problem } from '../../errors.js'
import type { StudentAccess } from '../../storage/student-repository.js'
import { API_PREFIX } from '../api-prefix.js'
import type { ByteString } from '../byte-string.js'

const PREFIX = `${API_PREFIX}/students/`
const ID_LENGTH = 36

/**
 * The parser of one exact student URL, `/api/v1/students/<id><suffix>`: the id (a canonical
 * UUID, lower-cased) of a URL with nothing else, no query and no encoding; else undefined.
 */
export function studentUrl(suffix: string): (url: string) => string | undefined {
  const length = PREFIX.length + ID_LENGTH + suffix.length
  return (url) => {
    if (url.length !== length || !url.startsWith(PREFIX) || !url.endsWith(suffix)) return undefined
    const id = url.slice(PREFIX.length, PREFIX.length + ID_LENGTH)
    return UUID.test(id) ? id.toLowerCase() : undefined
  }
}

/** The answer to a student request: a body or a problem (under the request id both carry); undefined: the router's. */
export type StudentOutcome =
  | { requestId: string; body: ByteString }
  | { requestId: string; problem: Problem }
  | undefined

/** Who is asking, for the disclosure record: the key the fast path admitted, under a request id of its own. */
export function keyAccess(key: KeyRecord, requestId: string, at: number): StudentAccess {
  return { at, requestId, keyId: key.keyId, organisationId: key.organisation.id, sandbox: key.sandbox }
}
