/**
 * `curriculum agreement ended`: each ended agreement with data to delete, when its links end or
 * ended, and whether the partner attested the deletion (docs/end-of-agreement.md).
 */
import type { Command } from 'commander'
import { systemClock } from '../../../clock.js'
import { endedAgreementDocument } from '../../../cases/ended-agreement.js'
import type { AgreementEnd } from '../../../storage/agreement-end-repository.js'
import { act } from '../../command-action.js'
import { ORG_FILTER, defineCommand } from '../../options.js'
import { type CommandResult, tableOf } from '../../output.js'
import { listedByOrganisation } from '../../organisation-filter.js'

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

export function defineAgreementEnded(agreement: Command): void {
  defineCommand(
    agreement,
    'ended',
    'List ended agreements with data to delete: when the links end or ended, and who attested the deletion',
    ['curriculum agreement ended', 'curriculum agreement ended --org "Acme Learning" --json'],
  )
    .option(...ORG_FILTER)
    .action(act(listEnded))
}

async function listEnded(command: Command): Promise<CommandResult> {
  const options = command.opts<{ org?: string }>()
  const { rows: ends, names } = await listedByOrganisation(options.org, async (db, organisationId) =>
    (await import('../../../storage/agreement-end-repository.js')).agreementEnds(db, systemClock.now(), organisationId),
  )
  return {
    data: { ends: ends.map((end) => endJson(end, names.get(end.organisationId))) },
    text: tableOf(
      'no ended agreement with data to delete',
      ['ORGANISATION', 'AGREEMENT', 'DOCUMENT', 'ENDED', 'DELETE BY', 'LINKS ENDED', 'STUDENTS', 'ATTESTED'],
      ends,
      (end) => [
        names.get(end.organisationId),
        end.agreement.id,
        end.agreement.document_ref,
        end.endedAt,
        end.deletionDueAt,
        end.disposition?.unlinkedAt ?? 'not yet',
        String(end.students),
        end.attestation?.attestedAt ?? 'not yet',
      ],
    ),
  }
}
