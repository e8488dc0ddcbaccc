/**
 * `curriculum links import`: which organisation may see which student. A partner reaches a
 * student's data only through such a link, so both ends must already exist. `links remove`
 * takes one away, and tells the organisation (change feed and webhook) to drop its copy.
 */
import type { Command } from 'commander'
import { systemClock } from '../../clock.js'
import { act } from '../command-action.js'
import type { OrganisationRow } from '../../storage/tables.js'
import type { LinkImportRow } from '../../storage/student-import-repository.js'
import { defineImportCommand } from '../import-command.js'
import { text, uuid } from '../import-fields.js'
import type { ImportSpec } from '../import-runner.js'
import { UUID } from '../../domain/uuid.js'
import { defineCommand, defineGroup, uuidOption } from '../options.js'

interface Organisations {
  byId: Map<string, OrganisationRow>
  byName: Map<string, OrganisationRow>
}

export const linkImport: ImportSpec<LinkImportRow, Organisations> = {
  noun: 'link',
  audit: { action: 'links.import', target: 'links' },
  fields: ['studentId', 'organisation'],
  unknownField: 'only studentId and organisation are accepted',
  async prepare(db) {
    const organisations = await (await import('../../storage/access-repository.js')).listOrganisations(db)
    return {
      byId: new Map(organisations.map((org) => [org.id, org])),
      byName: new Map(organisations.map((org) => [org.name, org])),
    }
  },
  parse(row, organisations) {
    const studentId = uuid(row, 'studentId')
    const name = text(row, 'organisation')
    // The same rule as findOrganisation: a UUID is an id, anything else an exact name.
    const organisation =
      name === null
        ? undefined
        : UUID.test(name.trim())
          ? organisations.byId.get(name.trim().toLowerCase())
          : organisations.byName.get(name.trim())
    if (name !== null && organisation === undefined)
      row.report('organisation', `no organisation "${name}"; create it with: curriculum org create --name <name>`)
    // Imports bring real children, and a sandbox is where anyone who signs up experiments,
    // with no agreement behind it: no real child belongs there, even where its keys cannot look.
    const sandbox = organisation?.kind === 'sandbox'
    if (sandbox)
      row.report(
        'organisation',
        `"${organisation.name}" is a sandbox organisation, which holds synthetic students only; ` +
          'link real students to a partner organisation',
      )
    if (studentId === null || organisation === undefined || sandbox) return null
    return { studentId, organisationId: organisation.id }
  },
  key: (row) => `${row.studentId} ${row.organisationId}`,
  duplicate: (row, firstLine) => ({
    field: 'organisation',
    message: `student ${row.studentId} is already linked to this organisation on line ${firstLine}`,
  }),
  student: { field: 'studentId', of: (row) => row.studentId, mustExist: true },
  write: async (db, rows, now, progress) =>
    (await import('../../storage/student-import-repository.js')).linkStudents(db, rows, now, progress),
}

export function registerLinks(program: Command): void {
  const group = defineGroup(
    program,
    'links',
    'Link students to the organisations that may see them, or unlink one',
    'curriculum links import links.csv',
  )
  defineImportCommand(
    group,
    linkImport,
    'Link existing students to organisations from a CSV or JSON Lines file, all or nothing',
    ['curriculum links import links.csv      # header: studentId,organisation (an id or exact name)'],
  )
  defineCommand(
    group,
    'remove',
    'Unlink a student from an organisation: its keys and webhooks no longer reach the student, and its ' +
      'change feed and subscribed webhooks get a student_unlinked notice (the id only)',
    [
      'curriculum links remove --org "Acme Learning" --student 0b6d9a3e-3f1c-4d57-9a0e-2a7c5c1e8f42',
      'curriculum links remove --org 0b7f3a52-6c1e-4d1a-9f55-2f7f0c7e8a10 ' +
        '--student 0b6d9a3e-3f1c-4d57-9a0e-2a7c5c1e8f42 --json',
    ],
    { audit: 'links.remove' },
  )
    .requiredOption('--org <organisation>', 'organisation id or exact name')
    .requiredOption('--student <id>', 'the student id', uuidOption)
    .action(
      act(async (command, audit) => {
        const { org, student } = command.opts<{ org: string; student: string }>()
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
        const named = `${organisation.name} (${organisation.id})`
        return {
          data: { organisation: { id: organisation.id, name: organisation.name }, studentId: student, ...outcome },
          text: outcome.unlinked
            ? `unlinked student ${student} from ${named}; ${outcome.webhooks} webhook deliveries queued`
            : `student ${student} was not linked to ${named}: nothing changed`,
        }
      }),
    )
}
