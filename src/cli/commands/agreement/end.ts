/**
 * `curriculum agreement end`: ends one agreement, or every agreement of an organisation, from
 * now on. With no other agreement in force the organisation's keys lose student data at once and
 * its links end after the disposition period (docs/end-of-agreement.md), so the command shows
 * what it ends and asks first (confirm.ts).
 */
import type { Command } from 'commander'
import type { Kysely } from 'kysely'
import { systemClock } from '../../../clock.js'
import type { AgreementRow, Database } from '../../../storage/tables.js'
import type { Audit } from '../../audit.js'
import { act } from '../../command-action.js'
import { confirmChange, type PendingChange, withConfirmation } from '../../confirm.js'
import { defineCommand, uuidOption } from '../../options.js'
import { CliError, type CommandResult, plural, UsageError } from '../../output.js'
import { withStorage } from '../../storage-session.js'
import { agreementJson, agreementState } from './views.js'

export function defineAgreementEnd(agreement: Command): void {
  const end = defineCommand(
    agreement,
    'end',
    "End one agreement, or every agreement of an organisation, from now on; shows what it ends (its keys' access " +
      'to student data at once when no other agreement stays in force, the links after the disposition period) ' +
      'and asks first',
    [
      'curriculum agreement end --org "Acme Learning"                 # shows what ends, asks',
      'curriculum agreement end --id 5d1c1c4e-2b6a-4d53-9d57-7f3a1b9e0c11 --dry-run',
      'curriculum agreement end --org "Acme Learning" --yes --json',
    ],
    { audit: 'agreement.end' },
  )
    .option('--org <organisation>', 'end every agreement of this organisation (id or exact name)')
    .option('--id <agreementId>', 'end this agreement only', uuidOption)
  withConfirmation(end, 'end them')
  end.action(act(endAgreement))
}

async function endAgreement(command: Command, audit: Audit): Promise<CommandResult> {
  const options = command.opts<{ org?: string; id?: string }>()
  if ((options.org === undefined) === (options.id === undefined))
    throw new UsageError('give exactly one of --org <organisation> or --id <agreementId>')
  const now = systemClock.now()
  const confirmed = await confirmChange(
    command,
    await withStorage(({ storage }) => agreementEnding(storage.db, options, now)),
  )
  if (!confirmed.write) return confirmed.result
  const ended = await audit.change(async ({ db }) => {
    const [{ findOrganisation }, { endAgreements }] = await Promise.all([
      import('../../../storage/access-repository.js'),
      import('../../../cases/agreement-end.js'),
    ])
    let organisationId: string
    let ended: AgreementRow[]
    if (options.id !== undefined) {
      const existing = await agreementById(db, options.id)
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
}

async function agreementById(db: Kysely<Database>, id: string): Promise<AgreementRow> {
  const { listAgreements } = await import('../../../storage/access-repository.js')
  const existing = (await listAgreements(db)).find((row) => row.id === id)
  if (existing === undefined) throw new CliError(`no agreement "${id}"`)
  return existing
}

/**
 * What ending would end, read only: the agreements still open, and whether the organisation then
 * has none in force, when its keys lose student data at once and its links end after the period.
 */
async function agreementEnding(
  db: Kysely<Database>,
  target: { org?: string; id?: string },
  now: number,
): Promise<PendingChange> {
  const [{ findOrganisation, listAgreements }, { countLinked }] = await Promise.all([
    import('../../../storage/access-repository.js'),
    import('../../../storage/share-listing-repository.js'),
  ])
  const organisation =
    target.id !== undefined
      ? await findOrganisation(db, (await agreementById(db, target.id)).organisation_id)
      : await findOrganisation(db, target.org!)
  const all = await listAgreements(db, organisation.id)
  const ending = all.filter((row) => row.ended_at === null && (target.id === undefined || row.id === target.id))
  const staying = all.filter((row) => !ending.includes(row) && agreementState(row, now) === 'active')
  const linked = await countLinked(db, organisation.id)
  const days = Math.max(0, ...ending.map((row) => row.disposition_days))
  const lines =
    ending.length === 0
      ? []
      : [
          `end ${plural(ending.length, 'agreement')} of ${organisation.name} (${organisation.id}): ` +
            ending.map((row) => `${row.document_ref} (${row.id}, ${agreementState(row, now)})`).join(', '),
          staying.length > 0
            ? `${organisation.name} keeps ${plural(staying.length, 'agreement')} in force ` +
              `(${staying.map((row) => row.document_ref).join(', ')}): its access to students continues`
            : `${organisation.name} then has no agreement in force: its keys get 403 agreement_required on every ` +
              `student endpoint at once (${plural(linked, 'student')} linked), and unless a new agreement is ` +
              `recorded, its links end after the disposition period (${plural(days, 'day')}), each student with a ` +
              'student_unlinked notice',
        ]
  return {
    lines,
    data: {
      preview: {
        organisation: { id: organisation.id, name: organisation.name },
        ending: ending.map((row) => agreementJson(row, now)),
        inForceAfter: staying.map((row) => row.id),
        linked,
      },
    },
    ends: ending.length > 0,
    action: `end ${plural(ending.length, 'agreement')}`,
  }
}
