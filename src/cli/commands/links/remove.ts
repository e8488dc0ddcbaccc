/**
 * `curriculum links remove`: ending an organisation's share of a school, or unlinking one student
 * from it. Either ends the partner's access to children and tells it to delete its copies, so the
 * command shows what it would end and asks first (confirm.ts).
 */
import type { Command } from 'commander'
import type { Kysely } from 'kysely'
import { systemClock } from '../../../clock.js'
import type { Database, OrganisationRow, SchoolRow } from '../../../storage/tables.js'
import type { Audit } from '../../audit.js'
import { act } from '../../command-action.js'
import { confirmChange, type PendingChange, withConfirmation } from '../../confirm.js'
import { ORG_NAMED, defineCommand, uuidOption } from '../../options.js'
import { type CommandResult, plural, UsageError } from '../../output.js'
import { withStorage } from '../../storage-session.js'
import { named, organisationJson } from './views.js'

/** What the organisation sees of an unlink, as the dashboard's confirmation says it. */
const told = (whom: 'the student' | 'them') =>
  `its keys get 404 for ${whom} at once, and its change feed and webhooks get a student_unlinked notice ` +
  `(the id only)${whom === 'them' ? ' for each' : ''}, telling it to delete its copy`

export function defineLinksRemove(links: Command): void {
  const command = defineCommand(
    links,
    'remove',
    "End an organisation's share of a school (--school), or unlink one student from it (--student, which takes " +
      'the student out of all its shares): each student no share holds any more is unlinked, and the ' +
      "organisation's change feed and subscribed webhooks get a student_unlinked notice (the id only). Shows " +
      'what it would end and asks first.',
    [
      'curriculum links remove --org "Acme Learning" --student 0b6d9a3e-3f1c-4d57-9a0e-2a7c5c1e8f42   # asks',
      'curriculum links remove --org "Acme Learning" --school "Hillside Primary" --dry-run',
      'curriculum links remove --org "Acme Learning" --school "Hillside Primary" --yes --json',
    ],
    { audit: 'links.remove' },
  )
    .requiredOption(...ORG_NAMED)
    .option('--student <id>', 'the student id', uuidOption)
    .option('--school <school>', 'school id, external id or exact name')
  withConfirmation(command, 'end the share or unlink the student')
  command.action(act(removeLink))
}

async function removeLink(command: Command, audit: Audit): Promise<CommandResult> {
  const { org, student, school } = command.opts<{ org: string; student?: string; school?: string }>()
  if ((student === undefined) === (school === undefined))
    throw new UsageError('name one student with --student, or a school with --school')
  const change = student === undefined ? await shareEnding(org, school!) : await unlinking(org, student)
  const confirmed = await confirmChange(command, change)
  if (!confirmed.write) return confirmed.result
  return student === undefined ? endSchoolShare(audit, org, school!) : unlink(audit, org, student)
}

/** What unlinking would end: the student's link, held by these shares. Reads only. */
async function unlinking(org: string, studentId: string): Promise<PendingChange> {
  return withStorage(async ({ storage: { db } }) => {
    const [{ findOrganisation }, { sharesHoldingStudent }, { isLinked }] = await Promise.all([
      import('../../../storage/access-repository.js'),
      import('../../../storage/share-listing-repository.js'),
      import('../../../storage/linked-student-repository.js'),
    ])
    const organisation = await findOrganisation(db, org)
    const linked = await isLinked(db, organisation.id, studentId)
    const shares = await sharesHoldingStudent(db, organisation.id, studentId)
    const held =
      shares.length === 0
        ? ''
        : ` It is held by ${plural(shares.length, 'share')} (${shares
            .map((share) => `${share.kind} "${share.label}"`)
            .join(', ')}) and is taken out of all of them.`
    return {
      // A student not linked has nothing to end: the write then says so, and the sandbox refusal comes from it.
      ends: linked && organisation.kind !== 'sandbox',
      lines: linked ? [`unlink student ${studentId} from ${named(organisation)}: ${told('the student')}.${held}`] : [],
      data: {
        preview: {
          organisation: organisationJson(organisation),
          studentId,
          linked,
          shares: shares.map((share) => ({ id: share.shareId, kind: share.kind, label: share.label })),
        },
      },
      action: 'unlink the student',
    }
  })
}

/** What ending the school's share would end: the students it holds that no other share holds. Reads only. */
async function shareEnding(org: string, schoolRef: string): Promise<PendingChange> {
  return withStorage(async ({ storage: { db } }) => {
    const [{ findOrganisation }, { findSchool }, { heldByNoOtherShare, studentsInShare }] = await Promise.all([
      import('../../../storage/access-repository.js'),
      import('../../../storage/school-repository.js'),
      import('../../../storage/share-listing-repository.js'),
    ])
    const organisation = await findOrganisation(db, org)
    const school = await findSchool(db, schoolRef)
    const shareId = await shareInForceOf(db, organisation, school)
    const students = await studentsInShare(db, shareId)
    const unlinking = await heldByNoOtherShare(db, shareId)
    return {
      ends: true,
      lines: [
        `end the share of school ${school.name} with ${named(organisation)} (share ${shareId}): it holds ` +
          `${plural(students, 'student')}.`,
        `${plural(unlinking, 'student')} no other share holds: unlinked; ${told('them')}.`,
        `${plural(students - unlinking, 'student stays', 'students stay')} linked through other shares; ` +
          'students who join the school later are no longer linked.',
      ],
      data: {
        preview: {
          organisation: organisationJson(organisation),
          school: { id: school.id, name: school.name },
          shareId,
          students,
          unlinking,
        },
      },
      action: 'end the share',
    }
  })
}

/** The id of the organisation's share of the school in force; NotFoundError when there is none. */
async function shareInForceOf(db: Kysely<Database>, organisation: OrganisationRow, school: SchoolRow): Promise<string> {
  const { schoolShareInForce } = await import('../../../storage/share-repository.js')
  const share = await schoolShareInForce(db, organisation.id, school.id)
  if (share === undefined) {
    const { NotFoundError } = await import('../../../domain/errors.js')
    throw new NotFoundError(`${named(organisation)} has no share of school ${school.name} in force`)
  }
  return share.id
}

async function unlink(audit: Audit, org: string, student: string): Promise<CommandResult> {
  const { organisation, outcome } = await audit.change(async ({ db }) => {
    const [{ findOrganisation }, { unlinkStudent }] = await Promise.all([
      import('../../../storage/access-repository.js'),
      import('../../../cases/unlink.js'),
    ])
    const organisation = await findOrganisation(db, org)
    const outcome = await unlinkStudent(db, student, organisation.id, systemClock.now())
    return {
      value: { organisation, outcome },
      target: `student:${student}`,
      changed: { organisation: organisation.name, organisationId: organisation.id, ...outcome },
    }
  })
  return {
    data: { organisation: organisationJson(organisation), studentId: student, ...outcome },
    text: outcome.unlinked
      ? `unlinked student ${student} from ${named(organisation)}; ${outcome.webhooks} webhook deliveries queued`
      : `student ${student} was not linked to ${named(organisation)}: nothing changed`,
  }
}

async function endSchoolShare(audit: Audit, org: string, schoolRef: string): Promise<CommandResult> {
  const { organisation, school, ended } = await audit.change(async ({ db }) => {
    const [{ findOrganisation }, { findSchool }, { endShare }] = await Promise.all([
      import('../../../storage/access-repository.js'),
      import('../../../storage/school-repository.js'),
      import('../../../cases/shares.js'),
    ])
    const organisation = await findOrganisation(db, org)
    const school = await findSchool(db, schoolRef)
    const shareId = await shareInForceOf(db, organisation, school)
    const ended = await endShare(db, shareId, systemClock.now())
    return {
      value: { organisation, school, ended },
      target: `share:${shareId}`,
      changed: {
        organisation: organisation.name,
        organisationId: organisation.id,
        school: school.name,
        schoolId: school.id,
        released: ended.released,
        unlinked: ended.unlinked.length,
        webhooks: ended.webhooks,
      },
    }
  })
  return {
    data: {
      organisation: organisationJson(organisation),
      school: { id: school.id, name: school.name },
      shareId: ended.share.id,
      released: ended.released,
      unlinked: ended.unlinked.map((link) => link.studentId),
      webhooks: ended.webhooks,
    },
    text:
      `ended the share of school ${school.name} with ${named(organisation)}: it held ` +
      `${plural(ended.released, 'student')}; ${ended.unlinked.length} unlinked (no other share holds them), ` +
      `${ended.webhooks} webhook deliveries queued`,
  }
}
