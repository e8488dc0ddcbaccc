/**
 * `curriculum links add`, `links remove` and `links shares`: sharing a school's students (present
 * and future) or a list of students with an organisation, ending a school's share or unlinking
 * one student, and listing an organisation's shares (storage/shares.ts).
 */
import path from 'node:path'
import { type Command, Option } from 'commander'
import { systemClock } from '../../clock.js'
import type { ShareOutcome } from '../../storage/shares.js'
import type { OrganisationRow } from '../../storage/tables.js'
import type { Audit } from '../audit.js'
import { act } from '../command-action.js'
import { defineCommand, uuidOption } from '../options.js'
import { plural, table, UsageError } from '../output.js'
import { formatOf, RECORD_FORMATS, type RecordFormat } from '../records.js'
import { withStorage } from '../storage-session.js'

const ORG = 'curriculum links add --org "Acme Learning"'

const named = (o: Pick<OrganisationRow, 'id' | 'name'>) => `${o.name} (${o.id})`
const organisationJson = (o: Pick<OrganisationRow, 'id' | 'name'>) => ({ id: o.id, name: o.name })

function shareJson(outcome: ShareOutcome) {
  const { share } = outcome
  return {
    id: share.id,
    kind: share.kind,
    label: share.label,
    schoolId: share.school_id,
    createdAt: share.created_at,
    students: outcome.students,
    linked: outcome.linked,
  }
}

interface AddOptions {
  org: string
  school?: string
  file?: string
  label?: string
  format?: RecordFormat
}

export function registerLinkShares(group: Command): void {
  defineCommand(
    group,
    'add',
    "Share a school's students, present and future, with an organisation (--school), or the students a file " +
      'lists (--file): each is linked, and the share says why',
    [
      `${ORG} --school "Hillside Primary"`,
      `${ORG} --file reading-club.csv      # header: student (an id or external id a row)`,
      `${ORG} --file ids.jsonl --label "Reading club" --json`,
    ],
    { audit: 'links.add' },
  )
    .requiredOption('--org <organisation>', 'organisation id or exact name')
    .option('--school <school>', 'school id, external id or exact name')
    .option('--file <file>', 'CSV with a student column, or JSON Lines {"student": ...}: ids or external ids')
    .option('--label <label>', "what to call a list share (default: the file's name)")
    .addOption(
      new Option('--format <format>', 'format of --file; by default taken from its extension').choices(RECORD_FORMATS),
    )
    .action(
      act(async (command, audit) => {
        const options = command.opts<AddOptions>()
        if ((options.school === undefined) === (options.file === undefined))
          throw new UsageError('name a school with --school, or a file of students with --file')
        if (options.school !== undefined && options.label !== undefined)
          throw new UsageError('--label names a list share; a school share is named after the school')
        const { readStudentList, resolveStudentList } = await import('../student-list-file.js')
        const list =
          options.file === undefined
            ? undefined
            : await readStudentList(options.file, formatOf(options.file, options.format))
        const now = systemClock.now()
        const { organisation, outcome } = await audit.change(async ({ db }) => {
          const [{ findOrganisation }, shares] = await Promise.all([
            import('../../storage/access-repository.js'),
            import('../../storage/shares.js'),
          ])
          const organisation = await findOrganisation(db, options.org)
          let outcome: ShareOutcome
          if (options.school !== undefined) {
            const { findSchool } = await import('../../storage/schools.js')
            const school = await findSchool(db, options.school)
            outcome = await shares.shareSchool(
              db,
              { organisationId: organisation.id, schoolId: school.id, createdBy: audit.actor },
              now,
            )
          } else {
            const studentIds = await resolveStudentList(db, list!)
            const label = options.label ?? path.basename(options.file!)
            outcome = await shares.shareList(
              db,
              { organisationId: organisation.id, studentIds, label, createdBy: audit.actor },
              now,
            )
          }
          return {
            value: { organisation, outcome },
            target: `share:${outcome.share.id}`,
            changed: { organisation: organisation.name, organisationId: organisation.id, ...shareJson(outcome) },
          }
        })
        const { share } = outcome
        return {
          data: { organisation: organisationJson(organisation), share: shareJson(outcome) },
          text:
            `shared ${share.kind === 'school' ? `school ${share.label}` : `list "${share.label}"`} with ` +
            `${named(organisation)}: ${plural(outcome.students, 'student')}, ${outcome.linked} linked anew; ` +
            `share ${share.id}`,
        }
      }),
    )

  defineCommand(group, 'shares', "List an organisation's shares: kind, label, students held, when made and ended", [
    'curriculum links shares --org "Acme Learning"',
    'curriculum links shares --org "Acme Learning" --json',
  ])
    .requiredOption('--org <organisation>', 'organisation id or exact name')
    .action(
      act(async (command) => {
        const { org } = command.opts<{ org: string }>()
        const { organisation, shares, linked } = await withStorage(async ({ storage }) => {
          const [{ findOrganisation }, { listShares, countLinked }] = await Promise.all([
            import('../../storage/access-repository.js'),
            import('../../storage/share-listing.js'),
          ])
          const organisation = await findOrganisation(storage.db, org)
          return {
            organisation,
            shares: await listShares(storage.db, organisation.id),
            linked: await countLinked(storage.db, organisation.id),
          }
        })
        return {
          data: { organisation: organisationJson(organisation), linked, shares },
          text: [
            `${named(organisation)}: ${plural(linked, 'student')} linked`,
            ...(shares.length === 0
              ? ['no shares']
              : table(
                  ['ID', 'KIND', 'LABEL', 'STUDENTS', 'CREATED', 'ENDED'],
                  shares.map((s) => [s.id, s.kind, s.label, String(s.students), s.createdAt, s.endedAt]),
                )),
          ],
        }
      }),
    )
}

export function registerLinkRemove(group: Command): void {
  defineCommand(
    group,
    'remove',
    "End an organisation's share of a school (--school), or unlink one student from it (--student, which takes " +
      'the student out of all its shares): each student no share holds any more is unlinked, and the ' +
      "organisation's change feed and subscribed webhooks get a student_unlinked notice (the id only)",
    [
      'curriculum links remove --org "Acme Learning" --student 0b6d9a3e-3f1c-4d57-9a0e-2a7c5c1e8f42',
      'curriculum links remove --org "Acme Learning" --school "Hillside Primary" --json',
    ],
    { audit: 'links.remove' },
  )
    .requiredOption('--org <organisation>', 'organisation id or exact name')
    .option('--student <id>', 'the student id', uuidOption)
    .option('--school <school>', 'school id, external id or exact name')
    .action(
      act(async (command, audit) => {
        const { org, student, school } = command.opts<{ org: string; student?: string; school?: string }>()
        if ((student === undefined) === (school === undefined))
          throw new UsageError('name one student with --student, or a school with --school')
        return student === undefined ? endSchoolShare(audit, org, school!) : unlink(audit, org, student)
      }),
    )
}

async function unlink(audit: Audit, org: string, student: string) {
  const { organisation, outcome } = await audit.change(async ({ db }) => {
    const [{ findOrganisation }, { unlinkStudent }] = await Promise.all([
      import('../../storage/access-repository.js'),
      import('../../storage/student-removal.js'),
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

async function endSchoolShare(audit: Audit, org: string, schoolRef: string) {
  const { organisation, school, ended } = await audit.change(async ({ db }) => {
    const [{ findOrganisation }, { findSchool }, { endShare }] = await Promise.all([
      import('../../storage/access-repository.js'),
      import('../../storage/schools.js'),
      import('../../storage/shares.js'),
    ])
    const organisation = await findOrganisation(db, org)
    const school = await findSchool(db, schoolRef)
    const share = await db
      .selectFrom('shares')
      .select('id')
      .where('organisation_id', '=', organisation.id)
      .where('school_id', '=', school.id)
      .where('kind', '=', 'school')
      .where('ended_at', 'is', null)
      .executeTakeFirst()
    if (share === undefined) {
      const { NotFoundError } = await import('../../domain/errors.js')
      throw new NotFoundError(`${named(organisation)} has no share of school ${school.name} in force`)
    }
    const ended = await endShare(db, share.id, systemClock.now())
    return {
      value: { organisation, school, ended },
      target: `share:${share.id}`,
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
