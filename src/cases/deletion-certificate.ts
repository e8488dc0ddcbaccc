/**
 * Issues the certificate of deletion of an organisation's ended agreement, once its links have
 * ended (domain/deletion-certificate.ts): gathers the facts from storage and signs them. Issuing
 * one is audited, from the dashboard (here) and from the CLI (its own audit row, cli/audit.ts).
 */
import type { Kysely } from 'kysely'
import { isoAt } from '../clock.js'
import { storedDataCategories } from '../domain/agreement-terms.js'
import {
  type Attester,
  type CertificateFacts,
  type CertifiedStudent,
  certificateFile,
  certificateOf,
  type SignedCertificate,
  signCertificate,
} from '../domain/deletion-certificate.js'
import { ConflictError, NotFoundError } from '../domain/errors.js'
import type { SigningKey } from '../domain/signing-key.js'
import { organisationById } from '../storage/access-repository.js'
import { type AgreementEnd, type AttestationView, agreementEnds } from '../storage/agreement-end-repository.js'
import { deletionList } from '../storage/deletion-list-repository.js'
import type { Database } from '../storage/tables.js'
import { auditOperator, type OperatorAudit } from './operator-action.js'

type Db = Kysely<Database>

export interface IssuedCertificate {
  signed: SignedCertificate
  /** The file's text: what is served and written. */
  file: string
  /** A name to save it under. */
  filename: string
  end: AgreementEnd
}

function attester(view: AttestationView): Attester {
  return view.accountId !== null
    ? { kind: 'dashboard_account', accountId: view.accountId, email: view.accountEmail }
    : { kind: 'api_key', keyId: view.keyId!, name: view.keyName, prefix: view.keyPrefix }
}

/**
 * The end of `organisationId`'s agreement `agreementId` (its latest end whose links have ended
 * when left out). NotFoundError when it has none; ConflictError while the links have not ended.
 */
export async function disposedEnd(db: Db, organisationId: string, now: number, agreementId?: string) {
  const ends = await agreementEnds(db, now, organisationId)
  const end =
    agreementId === undefined
      ? (ends.find((candidate) => candidate.disposition !== null) ?? ends[0])
      : ends.find((candidate) => candidate.agreement.id === agreementId)
  if (end === undefined)
    throw new NotFoundError(
      agreementId === undefined
        ? `organisation ${organisationId} has no ended agreement: there is nothing to certify`
        : `organisation ${organisationId} has no ended agreement ${agreementId}`,
    )
  if (end.disposition === null)
    throw new ConflictError(
      `the links under agreement ${end.agreement.document_ref} have not ended yet: they end once its disposition ` +
        `period is over, at ${end.deletionDueAt}; a certificate can be issued after that`,
    )
  return end
}

export async function issueCertificate(db: Db, end: AgreementEnd, key: SigningKey, now: number) {
  if (end.disposition === null) throw new ConflictError('the links under this agreement have not ended yet')
  const organisation = await organisationById(db, end.organisationId)
  if (organisation === undefined) throw new NotFoundError(`no organisation ${end.organisationId}`)
  const { agreement } = end
  // Signed whole (Ed25519 signs the message, not a digest), so the list is gathered, a page at a time.
  const list: CertifiedStudent[] = []
  for await (const page of deletionList(db, end))
    for (const entry of page)
      list.push({ id: entry.studentId, askedBy: entry.askedBy, askedAt: entry.askedAt, webhook: entry.webhook })
  const facts: CertificateFacts = {
    organisation: { id: organisation.id, name: organisation.name },
    agreement: {
      id: agreement.id,
      reference: agreement.document_ref,
      purpose: agreement.purpose,
      dataCategories: storedDataCategories(agreement.data_categories),
      signedAt: agreement.signed_at,
      dispositionDays: agreement.disposition_days,
    },
    endedAt: end.endedAt,
    deletionDueAt: end.deletionDueAt,
    unlinkedAt: end.disposition.unlinkedAt,
    attestation:
      end.attestation === null
        ? null
        : { attestedAt: end.attestation.attestedAt, by: attester(end.attestation), students: end.attestation.students },
    students: {
      since: end.coverage.since,
      linked: end.coverage.linked,
      unlinked: end.coverage.unlinked,
      erased: end.coverage.erased,
      list,
    },
  }
  const signed = signCertificate(certificateOf(facts, isoAt(now)), key)
  const day = isoAt(now).slice(0, 10)
  return {
    signed,
    file: certificateFile(signed),
    filename: `certificate-of-deletion-${agreement.id}-${day}.json`,
    end,
  } satisfies IssuedCertificate
}

/**
 * The certificate as the operator downloads it from the dashboard, audited before it is handed
 * on: a download cut short was still recorded.
 */
export async function issueAuditedCertificate(
  db: Db,
  issue: { organisationName: string; end: AgreementEnd; key: SigningKey },
  audit: OperatorAudit,
  now: number,
): Promise<IssuedCertificate> {
  const { end } = issue
  const certificate = await issueCertificate(db, end, issue.key, now)
  await auditOperator(
    db,
    audit,
    {
      action: 'agreement.certificate',
      target: `organisation:${end.organisationId}`,
      detail: {
        organisation: issue.organisationName,
        agreementId: end.agreement.id,
        document: end.agreement.document_ref,
        students: end.students,
        attested: end.attestation !== null,
        kid: certificate.signed.signature.kid,
      },
    },
    now,
  )
  return certificate
}
