/**
 * The certificate of deletion: what the district hands a privacy officer once a partner's
 * agreement has ended. It names the agreement, the organisation, every student shared with the
 * organisation under it (ids only: linked when the links ended, or unlinked or erased earlier),
 * each with how and when its deletion was asked and what became of that notice's webhook, when
 * the agreement ended, when the links ended and when the partner attested the deletion, and
 * whether that attestation covers the whole list. It carries a detached Ed25519 signature by the
 * service's key over the RFC 8785 canonical form of the `certificate` member
 * (docs/end-of-agreement.md shows how to check it).
 */
import { canonicalJson, type JsonValue, sortedJson } from './canonical-json.js'
import { type PublicJwk, type SigningKey, signBytes, verifyBytes } from './signing-key.js'

export const CERTIFICATE_TYPE = 'certificate-of-deletion'
/** 2: every student the agreement covers, each with how its deletion was asked (1 listed the ids linked at the end). */
export const CERTIFICATE_VERSION = 2

/** Who attested: a partner's dashboard account or one of its API keys. */
export type Attester =
  | { kind: 'dashboard_account'; accountId: string; email: string | null }
  | { kind: 'api_key'; keyId: string; name: string | null; prefix: string | null }

export interface CertificateFacts {
  organisation: { id: string; name: string }
  agreement: {
    id: string
    reference: string
    purpose: string
    dataCategories: readonly string[]
    signedAt: string
    dispositionDays: number
  }
  endedAt: string
  deletionDueAt: string
  unlinkedAt: string
  /** `students`: how many its list held when attested; null for an attestation recorded before that was kept. */
  attestation: { attestedAt: string; by: Attester; students: number | null } | null
  students: {
    /** The start of the first agreement whose data the end covers. */
    since: string
    linked: number
    unlinked: number
    erased: number
    /** Every one of them, in id order. */
    list: readonly CertifiedStudent[]
  }
}

/** A student of the certificate, and how the organisation was asked to delete its data. */
export interface CertifiedStudent {
  id: string
  askedBy: 'disposition' | 'student.unlinked' | 'student.deleted'
  askedAt: string | null
  /** What became of the webhook of that notice; the change feed carried every notice. */
  webhook: 'delivered' | 'pending' | 'failed' | 'no_endpoint' | null
}

export interface CertificateSignature {
  alg: 'EdDSA'
  /** The key's RFC 7638 thumbprint, as the published key set names it. */
  kid: string
  /** Ed25519 over the canonical certificate, base64. */
  value: string
}

export interface SignedCertificate {
  certificate: { readonly [name: string]: JsonValue }
  signature: CertificateSignature
}

const count = (n: number, noun = 'student') => `${n} ${noun}${n === 1 ? '' : 's'}`

function attestationStatement(facts: CertificateFacts, total: number): string {
  const { attestation } = facts
  if (attestation === null) return 'The organisation has not attested the deletion of their data yet.'
  const at = `At ${attestation.attestedAt} the organisation attested that it deleted`
  if (attestation.students === null)
    return `${at} the data shared under the agreement; how many students its attestation covered was not recorded then.`
  if (attestation.students >= total)
    return `${at} the data of every student listed: its attestation covers this whole list.`
  return (
    `${at} the data of the ${count(attestation.students)} its list held then; it does not cover the ` +
    `${count(total - attestation.students, 'other')}, shared with the organisation after its attestation.`
  )
}

function statement(facts: CertificateFacts): string {
  const { linked, unlinked, erased } = facts.students
  const total = linked + unlinked + erased
  return (
    `Agreement ${facts.agreement.reference} between the district and ${facts.organisation.name} ended at ` +
    `${facts.endedAt}. This certificate covers the ${count(total)} shared with the organisation under it since ` +
    `${facts.students.since}: the ${count(linked)} whose links ended at ${facts.unlinkedAt}, each sent a ` +
    `student.unlinked notice then; the ${count(unlinked)} unlinked and the ${count(erased)} erased earlier, each ` +
    'sent a student.unlinked or student.deleted notice at the time listed (erased students are listed by id alone). ' +
    "Every notice went to the organisation's change feed; the list says, for each student, how and when its " +
    `deletion was asked and what became of the notice's webhook. ${attestationStatement(facts, total)}`
  )
}

/** The certificate itself, issued at `issuedAt`. */
export function certificateOf(facts: CertificateFacts, issuedAt: string): { readonly [name: string]: JsonValue } {
  const { organisation, agreement, attestation, students } = facts
  return {
    type: CERTIFICATE_TYPE,
    version: CERTIFICATE_VERSION,
    issuedAt,
    organisation: { id: organisation.id, name: organisation.name },
    agreement: {
      id: agreement.id,
      reference: agreement.reference,
      purpose: agreement.purpose,
      dataCategories: [...agreement.dataCategories],
      signedAt: agreement.signedAt,
      dispositionDays: agreement.dispositionDays,
    },
    endedAt: facts.endedAt,
    deletionDueAt: facts.deletionDueAt,
    unlinkedAt: facts.unlinkedAt,
    attestation:
      attestation === null
        ? null
        : { attestedAt: attestation.attestedAt, by: { ...attestation.by }, students: attestation.students },
    students: {
      count: students.linked + students.unlinked + students.erased,
      since: students.since,
      linkedAtEnd: students.linked,
      unlinkedEarlier: students.unlinked,
      erasedEarlier: students.erased,
      list: [...students.list]
        .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
        .map((s) => ({ id: s.id, askedBy: s.askedBy, askedAt: s.askedAt, webhook: s.webhook })),
    },
    statement: statement(facts),
  }
}

export function signCertificate(certificate: SignedCertificate['certificate'], key: SigningKey): SignedCertificate {
  return {
    certificate,
    signature: { alg: 'EdDSA', kid: key.publicJwk.kid, value: signBytes(key, canonicalJson(certificate)) },
  }
}

/** The file served and written: members in canonical order, indented, ending with a newline. */
export function certificateFile(signed: SignedCertificate): string {
  return `${JSON.stringify(sortedJson(signed as unknown as JsonValue), null, 2)}\n`
}

/**
 * Whether `document` (a certificate file, parsed) is signed by one of `keys`, the published key
 * set: its signature names the key, and verifies over the canonical certificate.
 */
export function verifyCertificate(document: unknown, keys: readonly Pick<PublicJwk, 'kty' | 'crv' | 'x' | 'kid'>[]) {
  if (typeof document !== 'object' || document === null) return false
  const { certificate, signature } = document as Partial<SignedCertificate>
  if (typeof certificate !== 'object' || certificate === null || typeof signature?.value !== 'string') return false
  const key = keys.find((candidate) => candidate.kid === signature.kid)
  return key !== undefined && signature.alg === 'EdDSA' && verifyBytes(key, canonicalJson(certificate), signature.value)
}
