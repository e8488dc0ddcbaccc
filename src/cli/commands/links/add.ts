/**
 * `curriculum links add`: sharing a school's students (present and future) or a list of students
 * with an organisation (cases/shares.ts).
 */
import path from 'node:path'
import { type Command, Option } from 'commander'
import { systemClock } from '../../../clock.js'
import type { ShareOutcome } from '../../../cases/shares.js'
import type { Audit } from '../../audit.js'
import { act } from '../../command-action.js'
import { ORG_NAMED, defineCommand } from '../../options.js'
import { type CommandResult, plural, UsageError } from '../../output.js'
import { RECORD_FORMATS, type RecordFormat } from '../../../imports/records.js'
import { formatOf } from '../../record-format.js'
import { named, organisationJson } from './views.js'

const ORG = 'curriculum links add --org "Acme Learning"'

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

export function defineLinksAdd(links: Command): void {
  defineCommand(
    links,
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
    .requiredOption(...ORG_NAMED)
    .option('--school <school>', 'school id, external id or exact name')
    .option('--file <file>', 'CSV with a student column, or JSON Lines {"student": ...}: ids or external ids')
    .option('--label <label>', "what to call a list share (default: the file's name)")
    .addOption(
      new Option('--format <format>', 'format of --file; by default taken from its extension').choices(RECORD_FORMATS),
    )
    .action(act(addShare))
}

async function addShare(command: Command, audit: Audit): Promise<CommandResult> {
  const options = command.opts<AddOptions>()
  if ((options.school === undefined) === (options.file === undefined))
    throw new UsageError('name a school with --school, or a file of students with --file')
  if (options.school !== undefined && options.label !== undefined)
    throw new UsageError('--label names a list share; a school share is named after the school')
  const { readStudentList, resolveStudentList } = await import('./student-list-file.js')
  const list =
    options.file === undefined ? undefined : await readStudentList(options.file, formatOf(options.file, options.format))
  const now = systemClock.now()
  const { organisation, outcome } = await audit.change(async ({ db }) => {
    const [{ findOrganisation }, shares] = await Promise.all([
      import('../../../storage/access-repository.js'),
      import('../../../cases/shares.js'),
    ])
    const organisation = await findOrganisation(db, options.org)
    let outcome: ShareOutcome
    if (options.school !== undefined) {
      const { findSchool } = await import('../../../storage/school-repository.js')
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
}
