/**
 * `curriculum agreement record`: a signed data-sharing agreement, which lets an organisation's
 * keys reach student data. Only the operator records one, from the signed document.
 */
import { type Command, InvalidArgumentError } from 'commander'
import { systemClock } from '../../../clock.js'
import {
  DATA_CATEGORIES,
  type DataCategory,
  describeDataCategories,
  dispositionDaysProblem,
  normalizePurpose,
  parseDataCategories,
  purposeProblem,
  storedDataCategories,
} from '../../../domain/agreement-terms.js'
import type { Audit } from '../../audit.js'
import { act } from '../../command-action.js'
import { ORG_NAMED, dateOption, defineCommand } from '../../options.js'
import { type CommandResult, plural } from '../../output.js'
import { agreementJson, agreementState } from './views.js'

function dataOption(text: string): DataCategory[] {
  try {
    return parseDataCategories(text)
  } catch (error) {
    throw new InvalidArgumentError(`${(error as Error).message}.`)
  }
}

function purposeOption(text: string): string {
  const purpose = normalizePurpose(text)
  const problem = purposeProblem(purpose)
  if (problem !== null) throw new InvalidArgumentError(`${problem}.`)
  return purpose
}

function dispositionOption(text: string): number {
  const days = /^\d{1,5}$/.test(text.trim()) ? Number(text.trim()) : Number.NaN
  const problem = dispositionDaysProblem(days)
  if (problem !== null) throw new InvalidArgumentError(`${problem}.`)
  return days
}

export function defineAgreementRecord(agreement: Command): void {
  defineCommand(
    agreement,
    'record',
    'Record a signed data-sharing agreement for an organisation',
    [
      'curriculum agreement record --org "Acme Learning" --signed 2026-01-31 ' +
        '--expires 2027-01-31 --document DSA-2026-014 ' +
        '--purpose "Reading practice: show each learner their next lesson" --data "first_name tier progress" ' +
        '--disposition-days 30',
    ],
    { audit: 'agreement.record' },
  )
    .requiredOption(...ORG_NAMED)
    .requiredOption(
      '--signed <date>',
      'date it takes effect: 2026-01-31 (midnight UTC) or a full ISO timestamp',
      dateOption,
    )
    .option('--expires <date>', 'date it stops applying; open-ended if left out', dateOption)
    .requiredOption('--document <ref>', 'reference of the signed document, e.g. its file or contract number')
    .requiredOption('--purpose <text>', 'what the partner may use the data for, as the agreement says', purposeOption)
    .option(
      '--data <categories>',
      `kinds of data shared, space- or comma-separated: ${DATA_CATEGORIES.join(', ')} (default: all)`,
      dataOption,
    )
    .option(
      '--disposition-days <days>',
      'days after the end within which the partner must delete the data (default: AGREEMENT_DISPOSITION_DAYS)',
      dispositionOption,
    )
    .action(act(recordAgreement))
}

async function recordAgreement(command: Command, audit: Audit): Promise<CommandResult> {
  const options = command.opts<{
    org: string
    signed: number
    expires?: number
    document: string
    purpose: string
    data?: DataCategory[]
    dispositionDays?: number
  }>()
  const now = systemClock.now()
  const { row, organisation } = await audit.change(async ({ db, config }) => {
    const [{ findOrganisation }, { agreementAuditDetail, recordAgreement }] = await Promise.all([
      import('../../../storage/access-repository.js'),
      import('../../../cases/agreement-record.js'),
    ])
    const organisation = await findOrganisation(db, options.org)
    const row = await recordAgreement(
      db,
      {
        organisationId: organisation.id,
        signedAt: options.signed,
        expiresAt: options.expires ?? null,
        documentRef: options.document,
        purpose: options.purpose,
        dataCategories: options.data ?? DATA_CATEGORIES,
        dispositionDays: options.dispositionDays ?? config.agreementDispositionDays,
      },
      now,
      { publicUrl: config.publicUrl },
    )
    return {
      value: { row, organisation },
      target: `organisation:${organisation.id}`,
      changed: agreementAuditDetail(organisation.name, row),
    }
  })
  const state = agreementState(row, now)
  return {
    data: { agreement: agreementJson(row, now, organisation.name) },
    text: [
      `recorded agreement ${row.id} for ${organisation.name}: ` +
        `signed ${row.signed_at}, expires ${row.expires_at ?? 'never'} (${state})`,
      `shares ${describeDataCategories(storedDataCategories(row.data_categories))}; ` +
        `the partner deletes them within ${plural(row.disposition_days, 'day')} of its end`,
    ],
  }
}
