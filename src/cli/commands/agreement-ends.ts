/**
 * `curriculum agreement ended` (each ended agreement with data to delete: when its links end or
 * ended, and whether the partner attested the deletion) and `curriculum agreement certificate`
 * (the signed certificate of deletion of one, docs/end-of-agreement.md). Issuing a certificate is
 * audited, like its download in the dashboard.
 */
import fs from 'node:fs'
import type { Command } from 'commander'
import { systemClock } from '../../clock.js'
import { endedAgreementDocument } from '../../cases/ended-agreement.js'
import type { AgreementEnd } from '../../storage/agreement-end-repository.js'
import { act } from '../command-action.js'
import { defineCommand, uuidOption } from '../options.js'
import { CliError, plural, table } from '../output.js'
import { withStorage } from '../storage-session.js'

function endJson(end: AgreementEnd, organisation?: string) {
  const a = end.attestation
  return {
    organisationId: end.organisationId,
    ...(organisation === undefined ? {} : { organisation }),
    ...endedAgreementDocument(end),
    attestation:
      a === null
        ? null
        : {
            attestedAt: a.attestedAt,
            students: a.students,
            by: a.keyId !== null ? { keyId: a.keyId, keyPrefix: a.keyPrefix } : { account: a.accountEmail },
          },
  }
}

/** Opens `file` before anything is read or audited, so a path that cannot be written changes nothing. */
function openOutput(file: string): number {
  try {
    return fs.openSync(file, 'wx', 0o600)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    throw new CliError(
      code === 'EEXIST'
        ? `${file} already exists: choose a new file (a certificate never replaces one)`
        : `cannot write ${file}: ${(error as Error).message}`,
    )
  }
}

export function registerAgreementEnds(agreement: Command): void {
  defineCommand(
    agreement,
    'ended',
    'List ended agreements with data to delete: when the links end or ended, and who attested the deletion',
    ['curriculum agreement ended', 'curriculum agreement ended --org "Acme Learning" --json'],
  )
    .option('--org <organisation>', 'only this organisation (id or exact name)')
    .action(
      act(async (command) => {
        const options = command.opts<{ org?: string }>()
        const { ends, names } = await withStorage(async ({ storage }) => {
          const { findOrganisation, listOrganisations } = await import('../../storage/access-repository.js')
          const { agreementEnds } = await import('../../storage/agreement-end-repository.js')
          const organisationId =
            options.org === undefined ? undefined : (await findOrganisation(storage.db, options.org)).id
          const names = new Map((await listOrganisations(storage.db)).map((o) => [o.id, o.name]))
          return { ends: await agreementEnds(storage.db, systemClock.now(), organisationId), names }
        })
        return {
          data: { ends: ends.map((end) => endJson(end, names.get(end.organisationId))) },
          text:
            ends.length === 0
              ? 'no ended agreement with data to delete'
              : table(
                  [
                    'ORGANISATION',
                    'AGREEMENT',
                    'DOCUMENT',
                    'ENDED',
                    'DELETE BY',
                    'LINKS ENDED',
                    'STUDENTS',
                    'ATTESTED',
                  ],
                  ends.map((end) => [
                    names.get(end.organisationId),
                    end.agreement.id,
                    end.agreement.document_ref,
                    end.endedAt,
                    end.deletionDueAt,
                    end.disposition?.unlinkedAt ?? 'not yet',
                    String(end.students),
                    end.attestation?.attestedAt ?? 'not yet',
                  ]),
                ),
        }
      }),
    )

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
    .requiredOption('--org <organisation>', 'organisation id or exact name')
    .option('--agreement <agreementId>', 'the ended agreement (default: the latest whose links have ended)', uuidOption)
    .option('--out <file>', 'write it to this new file (never over an existing one) instead of standard output')
    .action(
      act(async (command, audit) => {
        const options = command.opts<{ org: string; agreement?: string; out?: string; json?: boolean }>()
        const now = systemClock.now()
        const descriptor = options.out === undefined ? undefined : openOutput(options.out)
        try {
          const issued = await audit.change(async ({ db }) => {
            const { findOrganisation } = await import('../../storage/access-repository.js')
            const { disposedEnd, issueCertificate } = await import('../../cases/deletion-certificate.js')
            const { loadSigningKey } = await import('../../services/signing-keys.js')
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
      }),
    )
}
