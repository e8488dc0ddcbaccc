/**
 * `curriculum links import <file>`: students linked to organisations from a file, all or nothing;
 * the links are held by one list share per organisation and file (cases/csv-import.ts).
 */
import path from 'node:path'
import type { Command } from 'commander'
import { UUID } from '../../../domain/uuid.js'
import type { LinkImportRow, LinkShares } from '../../../storage/student-import-repository.js'
import type { OrganisationRow } from '../../../storage/tables.js'
import { defineImportCommand } from '../../import-command.js'
import { text, uuid } from '../../import-fields.js'
import type { RecordImportSpec } from '../../../imports/record-spec.js'

interface LinkImportContext {
  byId: Map<string, OrganisationRow>
  byName: Map<string, OrganisationRow>
  /** This import's list share of each organisation, named after the file. */
  shares: LinkShares
}

export const linkImport: RecordImportSpec<LinkImportRow, LinkImportContext> = {
  noun: 'link',
  audit: { action: 'links.import', target: 'links' },
  fields: ['studentId', 'organisation'],
  unknownField: 'only studentId and organisation are accepted',
  async prepare(db, _options, run) {
    const [{ listOrganisations }, { importShares }] = await Promise.all([
      import('../../../storage/access-repository.js'),
      import('../../../storage/student-import-repository.js'),
    ])
    const organisations = await listOrganisations(db)
    return {
      byId: new Map(organisations.map((org) => [org.id, org])),
      byName: new Map(organisations.map((org) => [org.name, org])),
      shares: importShares(path.basename(run.file), run.actor),
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
  write: async (db, rows, now, progress, context) =>
    (await import('../../../cases/csv-import.js')).importLinks(db, rows, now, progress, context.shares),
}

export function defineLinksImport(links: Command): void {
  defineImportCommand(
    links,
    linkImport,
    'Link existing students to organisations from a CSV or JSON Lines file, all or nothing; the links are ' +
      'held by one list share per organisation, named after the file',
    ['curriculum links import links.csv      # header: studentId,organisation (an id or exact name)'],
  )
}
