/**
 * `curriculum agreement certificate`: the signed certificate of deletion of an ended agreement
 * (docs/end-of-agreement.md). Issuing one is audited, like its download in the dashboard.
 */
import fs from 'node:fs'
import type { Command } from 'commander'
import { systemClock } from '../../../clock.js'
import type { Audit } from '../../audit.js'
import { act } from '../../command-action.js'
import { ORG_NAMED, defineCommand, uuidOption } from '../../options.js'
import { type CommandResult, outputFileError, plural } from '../../output.js'

/** Opens `file` before anything is read or audited, so a path that cannot be written changes nothing. */
function openOutput(file: string): number {
  try {
    return fs.openSync(file, 'wx', 0o600)
  } catch (error) {
    throw outputFileError(file, error, 'certificate')
  }
}

export function defineAgreementCertificate(agreement: Command): void {
  defineCommand(
    agreement,
    'certificate',
    "Issue the signed certificate of deletion of an organisation's ended agreement (its latest unless --agreement)",
    [
      'curriculum agreement certificate --org "Acme Learning" --out acme-certificate.json',
      'curriculum agreement certificate --org "Acme Learning" --agreement 5d1c1c4e-2b6a-4d53-9d57-7f3a1b9e0c11 --json',
    ],
    { audit: 'agreement.certificate' },
  )
    .requiredOption(...ORG_NAMED)
    .option('--agreement <agreementId>', 'the ended agreement (default: the latest whose links have ended)', uuidOption)
    .option('--out <file>', 'write it to this new file (never over an existing one) instead of standard output')
    .action(act(issueDeletionCertificate))
}

async function issueDeletionCertificate(command: Command, audit: Audit): Promise<CommandResult> {
  const options = command.opts<{ org: string; agreement?: string; out?: string; json?: boolean }>()
  const now = systemClock.now()
  const descriptor = options.out === undefined ? undefined : openOutput(options.out)
  try {
    const issued = await audit.change(async ({ db }) => {
      const { findOrganisation } = await import('../../../storage/access-repository.js')
      const { disposedEnd, issueCertificate } = await import('../../../cases/deletion-certificate.js')
      const { loadSigningKey } = await import('../../../services/signing-keys.js')
      const organisation = await findOrganisation(db, options.org)
      const end = await disposedEnd(db, organisation.id, now, options.agreement)
      const issued = await issueCertificate(db, end, await loadSigningKey(db), now)
      return {
        value: issued,
        target: `organisation:${organisation.id}`,
        changed: {
          organisation: organisation.name,
          agreementId: end.agreement.id,
          document: end.agreement.document_ref,
          students: end.students,
          attested: end.attestation !== null,
          kid: issued.signed.signature.kid,
          output: options.out ?? 'stdout',
        },
      }
    })
    if (descriptor !== undefined) fs.writeFileSync(descriptor, issued.file)
    const { end, signed } = issued
    const summary = {
      agreementId: end.agreement.id,
      documentRef: end.agreement.document_ref,
      students: end.students,
      attested: end.attestation !== null,
      kid: signed.signature.kid,
    }
    return {
      data: options.out === undefined ? { certificate: signed } : { file: options.out, ...summary },
      text:
        options.out === undefined
          ? issued.file.trimEnd()
          : `wrote the certificate of deletion of agreement ${end.agreement.document_ref} ` +
            `(${plural(end.students, 'student')}, ` +
            `${end.attestation === null ? 'not attested yet' : 'attested'}) to ${options.out}`,
    }
  } catch (error) {
    if (descriptor !== undefined) fs.rmSync(options.out!, { force: true })
    throw error
  } finally {
    if (descriptor !== undefined) fs.closeSync(descriptor)
  }
}
