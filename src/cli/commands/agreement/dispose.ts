/**
 * `curriculum agreement dispose --org <org> [--now]`: the disposition of an organisation's ended
 * agreement at once, rather than at the server's next hourly run (a drill, or a district asking
 * for it): its shares and links end, each student with a `student.unlinked` notice, as the hourly
 * run does (cases/agreement-disposition.ts). Without --now it runs only once the disposition
 * period is over; with --now, before too. It shows what it will do and asks first (confirm.ts), is
 * audited (`agreement.dispose`), and does nothing the second time: the disposition is recorded
 * once per agreement.
 */
import type { Command } from 'commander'
import { systemClock } from '../../../clock.js'
import type { DispositionPlan } from '../../../cases/agreement-disposition.js'
import type { Audit } from '../../audit.js'
import { act } from '../../command-action.js'
import { confirmChange, withConfirmation } from '../../confirm.js'
import { ORG_NAMED, defineCommand } from '../../options.js'
import { CliError, type CommandResult, plural } from '../../output.js'
import { withStorage } from '../../storage-session.js'

type ToDispose = Extract<DispositionPlan, { kind: 'to_dispose' }>

/** Why there is nothing to dispose of, as the refusal says it. */
function refusal(plan: Exclude<DispositionPlan, { kind: 'to_dispose' | 'disposed' }>, name: string): CliError {
  switch (plan.kind) {
    case 'no_agreement':
      return new CliError(`${name} has no data-sharing agreement: there is nothing to dispose of`)
    case 'in_force': {
      const a = plan.agreement
      return new CliError(
        `agreement ${a.document_ref} of ${name} is in force${a.expires_at === null ? '' : ` until ${a.expires_at}`}: ` +
          'its data is shared on purpose; end it first (curriculum agreement end) to dispose of it',
      )
    }
    case 'not_ended':
      return new CliError(`no agreement of ${name} has ended: there is nothing to dispose of`)
  }
}

function preview(plan: ToDispose, name: string, early: boolean) {
  const { end } = plan
  const a = end.agreement.row
  const period = plan.due
    ? `its disposition period ended at ${end.deletionDueAt}`
    : `its disposition period runs until ${end.deletionDueAt}: --now ends the links before it`
  return {
    lines: [
      `agreement ${a.document_ref} of ${name} ended at ${end.endedAt}; ${period}`,
      `disposing of it now ends ${plural(plan.shares, 'share')} still in force and the links to ` +
        `${plural(plan.links, 'student')}, each with a student_unlinked notice in the change feed ` +
        `and a student.unlinked webhook to ${plural(plan.endpoints, 'endpoint')}; ` +
        'the certificate of deletion can be issued after',
    ],
    data: {
      agreementId: a.id,
      documentRef: a.document_ref,
      endedAt: end.endedAt,
      deletionDueAt: end.deletionDueAt,
      early,
      links: plan.links,
      shares: plan.shares,
      endpoints: plan.endpoints,
    },
  }
}

export function defineAgreementDispose(agreement: Command): void {
  withConfirmation(
    defineCommand(
      agreement,
      'dispose',
      "End an ended agreement's shares and links now, as the server does once its disposition period is over",
      [
        'curriculum agreement dispose --org "Acme Learning"            # once the period is over',
        'curriculum agreement dispose --org "Acme Learning" --now --yes # before it: a drill, or asked for',
        'curriculum agreement dispose --org "Acme Learning" --now --dry-run',
      ],
      { audit: 'agreement.dispose' },
    )
      .requiredOption(...ORG_NAMED)
      .option('--now', 'dispose of it even though its disposition period is not over yet'),
    'end the links',
  ).action(act(disposeAgreement))
}

async function disposeAgreement(command: Command, audit: Audit): Promise<CommandResult> {
  const options = command.opts<{ org: string; now?: boolean }>()
  const early = options.now === true
  const { organisation, plan } = await withStorage(async ({ storage }) => {
    const { findOrganisation } = await import('../../../storage/access-repository.js')
    const { dispositionPlan } = await import('../../../cases/agreement-disposition.js')
    const organisation = await findOrganisation(storage.db, options.org)
    return { organisation, plan: await dispositionPlan(storage.db, organisation.id, systemClock.now()) }
  })
  if (plan.kind === 'disposed')
    return {
      data: { agreementId: plan.end.agreement.id, disposed: false, unlinkedAt: plan.unlinkedAt },
      text:
        `nothing to do: the links under agreement ${plan.end.agreement.row.document_ref} of ` +
        `${organisation.name} ended at ${plan.unlinkedAt}`,
    }
  if (plan.kind !== 'to_dispose') throw refusal(plan, organisation.name)
  if (!plan.due && !early)
    throw new CliError(
      `the disposition period of agreement ${plan.end.agreement.row.document_ref} of ${organisation.name} ` +
        `runs until ${plan.end.deletionDueAt}: its links end then (the server does it within the hour), ` +
        'or add --now to end them now',
      [],
      1,
      { deletionDueAt: plan.end.deletionDueAt },
    )
  const change = preview(plan, organisation.name, early)
  const confirmation = await confirmChange(command, { ...change, ends: true, action: 'end the links' })
  if (!confirmation.write) return confirmation.result
  const outcome = await audit
    .change(async ({ db }) => {
      const { disposeOnDemand } = await import('../../../cases/agreement-disposition.js')
      const outcome = await disposeOnDemand(db, organisation.id, plan.end.agreement.id, systemClock.now(), early)
      // Done by another run meanwhile: nothing changed, so nothing to audit.
      if (outcome === undefined) throw new AlreadyDone()
      return {
        value: outcome,
        target: `organisation:${organisation.id}`,
        changed: { ...change.data, students: outcome.students, sharesEnded: outcome.sharesEnded },
      }
    })
    .catch((error: unknown) => {
      if (error instanceof AlreadyDone) return undefined
      throw error
    })
  if (outcome === undefined)
    return {
      data: { agreementId: plan.end.agreement.id, disposed: false },
      text: `nothing to do: the links under agreement ${plan.end.agreement.row.document_ref} ended meanwhile`,
    }
  return {
    data: { ...change.data, disposed: true, ...outcome },
    text:
      `disposed of agreement ${plan.end.agreement.row.document_ref} of ${organisation.name}: ended ` +
      `${plural(outcome.sharesEnded, 'share')} and the links to ${plural(outcome.students, 'student')} ` +
      `(${plural(outcome.webhooks, 'webhook delivery', 'webhook deliveries')} queued)`,
  }
}

class AlreadyDone extends Error {}
