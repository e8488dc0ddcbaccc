/**
 * `curriculum agreement ...`: the data-sharing agreements that allow an organisation's keys to
 * reach student data. Only the operator records them, from a signed document.
 */
import type { Command } from 'commander'
import { defineGroup } from '../../options.js'
import { defineAgreementCertificate } from './certificate.js'
import { defineAgreementDispose } from './dispose.js'
import { defineAgreementEnd } from './end.js'
import { defineAgreementEnded } from './ended.js'
import { defineAgreementList } from './list.js'
import { defineAgreementRecord } from './record.js'

export function defineAgreement(program: Command): void {
  const agreement = defineGroup(
    program,
    'agreement',
    'Record, end and list data-sharing agreements, and certify the deletion once one has ended',
    'curriculum agreement list --org "Acme Learning"',
  )
  defineAgreementRecord(agreement)
  defineAgreementEnd(agreement)
  defineAgreementList(agreement)
  defineAgreementEnded(agreement)
  defineAgreementCertificate(agreement)
  defineAgreementDispose(agreement)
}
