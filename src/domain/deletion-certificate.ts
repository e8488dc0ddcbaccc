/**
 * The certificate of deletion: what the district hands a privacy officer once a partner's
 * agreement has ended. It names the agreement, the organisation, the students concerned (ids
 * only), when the agreement ended, when their links ended and when the partner attested the
 * deletion, and carries a detached Ed25519 signature by the service's key over the RFC 8785
 * canonical form of the `certificate` member (docs/end-of-agreement.md shows how to check it).
 */
import { canonicalJson, type JsonValue, sortedJson } from './canonical-json.js'
import { type PublicJwk, type SigningKey, signBytes, verifyBytes } from './signing-key.js'

export const CERTIFICATE_TYPE = 'certificate-of-deletion'

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
  attestation: { attestedAt: string; by: Attester } | null
  studentIds: readonly string[]
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

function statement(facts: CertificateFacts): string {
  const students = `${facts.studentIds.length} student${facts.studentIds.length === 1 ? '' : 's'}`
  const unlinked =
    `Agreement ${facts.agreement.reference} between the district and ${facts.organisation.name} ended at ` +
    `${facts.endedAt}. At ${facts.unlinkedAt} the links between the organisation and the ${students} listed ended, ` +
    'and the organisation was sent a student.unlinked notice for each.'
  return facts.attestation === null
    ? `${unlinked} The organisation has not attested the deletion of their data yet.`
    : `${unlinked} At ${facts.attestation.attestedAt} the organisation attested that it deleted their data.`
}

/** The certificate itself, issued at `issuedAt`. */
export function certificateOf(facts: CertificateFacts, issuedAt: string): { readonly [name: string]: JsonValue } {
  const { organisation, agreement, attestation } = facts
  return {
    type: CERTIFICATE_TYPE,
    version: 1,
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
    attestation: attestation === null ? null : { attestedAt: attestation.attestedAt, by: { ...attestation.by } },
    students: { count: facts.studentIds.length, ids: [...facts.studentIds].sort() },
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
