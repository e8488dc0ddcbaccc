/**
 * `curriculum agreement ...`: the data-sharing agreements that allow an organisation's keys to
 * reach student data. Only the operator records them, from a signed document.
 */
import { type Command, InvalidArgumentError } from 'commander'
import { systemClock } from '../../clock.js'
import {
  DATA_CATEGORIES,
  type DataCategory,
  deletionDueAt,
  describeDataCategories,
  dispositionDaysProblem,
  normalizePurpose,
  parseDataCategories,
  purposeProblem,
  storedDataCategories,
} from '../../domain/agreement-terms.js'
import { type AgreementState, agreementState as stateAt } from '../../domain/agreements.js'
import type { AgreementRow } from '../../storage/tables.js'
import { act } from '../command-action.js'
import { registerAgreementDispose } from './agreement-dispose.js'
import { registerAgreementEnds } from './agreement-ends.js'
import { dateOption, defineCommand, defineGroup, uuidOption } from '../options.js'
import { CliError, plural, table, UsageError } from '../output.js'
import { withStorage } from '../storage-session.js'

/** The state at `now` (see domain/agreements.ts). */
function agreementState(row: AgreementRow, now: number): AgreementState {
  return stateAt({ signedAt: row.signed_at, expiresAt: row.expires_at, endedAt: row.ended_at }, now)
}

function agreementJson(row: AgreementRow, now: number, organisation?: string) {
  return {
    id: row.id,
    organisationId: row.organisation_id,
    ...(organisation === undefined ? {} : { organisation }),
    signedAt: row.signed_at,
    expiresAt: row.expires_at,
    endedAt: row.ended_at,
    documentRef: row.document_ref,
    createdAt: row.created_at,
    state: agreementState(row, now),
    purpose: row.purpose,
    dataCategories: storedDataCategories(row.data_categories),
    dispositionDays: row.disposition_days,
    deleteBy: deletionDueAt(datesOf(row), row.disposition_days),
  }
}

function datesOf(row: AgreementRow) {
  return { signedAt: row.signed_at, expiresAt: row.expires_at, endedAt: row.ended_at }
}

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

export function registerAgreement(program: Command): void {
  const agreement = defineGroup(
    program,
    'agreement',
    'Record, end and list data-sharing agreements, and certify the deletion once one has ended',
    'curriculum agreement list --org "Acme Learning"',
  )

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
    .requiredOption('--org <organisation>', 'organisation id or exact name')
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
    .action(
      act(async (command, audit) => {
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
          const { agreementAuditDetail, findOrganisation, recordAgreement } = await import(
            '../../storage/access-repository.js'
          )
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
      }),
    )

  defineCommand(
    agreement,
    'end',
    'End one agreement, or every agreement of an organisation, from now on',
    [
      'curriculum agreement end --org "Acme Learning"',
      'curriculum agreement end --id 5d1c1c4e-2b6a-4d53-9d57-7f3a1b9e0c11',
    ],
    { audit: 'agreement.end' },
  )
    .option('--org <organisation>', 'end every agreement of this organisation (id or exact name)')
    .option('--id <agreementId>', 'end this agreement only', uuidOption)
    .action(
      act(async (command, audit) => {
        const options = command.opts<{ org?: string; id?: string }>()
        if ((options.org === undefined) === (options.id === undefined))
          throw new UsageError('give exactly one of --org <organisation> or --id <agreementId>')
        const now = systemClock.now()
        const ended = await audit.change(async ({ db }) => {
          const { endAgreements, findOrganisation, listAgreements } = await import('../../storage/access-repository.js')
          let organisationId: string
          let ended: AgreementRow[]
          if (options.id !== undefined) {
            const existing = (await listAgreements(db)).find((row) => row.id === options.id)
            if (existing === undefined) throw new CliError(`no agreement "${options.id}"`)
            organisationId = existing.organisation_id
            ended = await endAgreements(db, { agreementId: existing.id }, now)
          } else {
            organisationId = (await findOrganisation(db, options.org!)).id
            ended = await endAgreements(db, { organisationId }, now)
          }
          return {
            value: ended,
            target: `organisation:${organisationId}`,
            changed: { ended: ended.map((row) => ({ agreementId: row.id, document: row.document_ref })) },
          }
        })
        return {
          data: { ended: ended.map((row) => agreementJson(row, now)) },
          text:
            ended.length === 0
              ? 'nothing to end: no agreement was still open'
              : `ended ${plural(ended.length, 'agreement')}: ${ended.map((row) => row.id).join(', ')}`,
        }
      }),
    )

  defineCommand(agreement, 'list', 'List agreements with their state now: active, pending, expired or ended', [
    'curriculum agreement list',
    'curriculum agreement list --org "Acme Learning" --json',
  ])
    .option('--org <organisation>', 'only this organisation (id or exact name)')
    .action(
      act(async (command) => {
        const options = command.opts<{ org?: string }>()
        const now = systemClock.now()
        const { rows, names } = await withStorage(async ({ storage }) => {
          const { findOrganisation, listAgreements, listOrganisations } = await import(
            '../../storage/access-repository.js'
          )
          const organisationId =
            options.org === undefined ? undefined : (await findOrganisation(storage.db, options.org)).id
          const names = new Map((await listOrganisations(storage.db)).map((org) => [org.id, org.name]))
          return { rows: await listAgreements(storage.db, organisationId), names }
        })
        return {
          data: { agreements: rows.map((row) => agreementJson(row, now, names.get(row.organisation_id))) },
          text:
            rows.length === 0
              ? 'no agreements'
              : table(
                  [
                    'ID',
                    'ORGANISATION',
                    'STATE',
                    'SIGNED',
                    'EXPIRES',
                    'ENDED',
                    'DOCUMENT',
                    'DATA',
                    'DELETE',
                    'PURPOSE',
                  ],
                  rows.map((row) => [
                    row.id,
                    names.get(row.organisation_id),
                    agreementState(row, now),
                    row.signed_at,
                    row.expires_at,
                    row.ended_at,
                    row.document_ref,
                    row.data_categories.replaceAll(' ', ','),
                    `${row.disposition_days}d after end`,
                    row.purpose === '' ? '(not recorded)' : row.purpose,
                  ]),
                ),
        }
      }),
    )
  registerAgreementEnds(agreement)
  registerAgreementDispose(agreement)
}
