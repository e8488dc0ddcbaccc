/**
 * `curriculum links import`: which organisation may see which student. A partner reaches a
 * student's data only through such a link, so both ends must already exist.
 */
import type { Command } from 'commander'
import type { OrganisationRow } from '../../storage/tables.js'
import type { LinkImportRow } from '../../storage/student-import-repository.js'
import { defineImportCommand } from '../import-command.js'
import { text, uuid } from '../import-fields.js'
import type { ImportSpec } from '../import-runner.js'
import { UUID } from '../../domain/uuid.js'
import { defineGroup } from '../options.js'

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
    'Link students to the organisations that may see them',
    'curriculum links import links.csv',
  )
  defineImportCommand(
    group,
    linkImport,
    'Link existing students to organisations from a CSV or JSON Lines file, all or nothing',
    ['curriculum links import links.csv      # header: studentId,organisation (an id or exact name)'],
  )
}
