/**
 * The command tree. Commands are registered on their parent with `.command()` (not
 * `addCommand`) so that each inherits the error handling set here.
 *
 * Command modules import storage and catalog code inside their actions, not at the top: the
 * database drivers and the query builder take a noticeable time to load, which --help, a usage
 * error or `catalog validate` should not pay (figures: docs/performance.md).
 */
import { Command } from 'commander'
import { defineAgreement } from './commands/agreement/index.js'
import { defineBackup } from './commands/backup/index.js'
import { defineCatalog } from './commands/catalog/index.js'
import { defineDisclosures } from './commands/disclosures/index.js'
import { defineKey } from './commands/key/index.js'
import { defineLinks } from './commands/links/index.js'
import { defineLti } from './commands/lti/index.js'
import { defineMail } from './commands/mail/index.js'
import { defineMigrate } from './commands/migrate.js'
import { defineOperator } from './commands/operator/index.js'
import { defineOrg } from './commands/org/index.js'
import { defineProgress } from './commands/progress/index.js'
import { defineRestore } from './commands/restore.js'
import { defineSchools } from './commands/schools/index.js'
import { defineRoster } from './commands/roster/index.js'
import { defineStudents } from './commands/students/index.js'

export function buildProgram(options: { json: boolean }): Command {
  const program = new Command('curriculum')
    .description(
      'Operate the Curriculum API: database, catalog, organisations, agreements, keys, ' +
        'student and roster imports, schools and shares, the disclosure log, outgoing mail, and the LTI tool',
    )
    .addHelpText(
      'after',
      '\nEvery command reads DATABASE_URL (and CATALOG_DIR) like the server does, and takes --json.\n' +
        '\nExample:\n  $ DATABASE_URL=sqlite:data/curriculum.db curriculum org list\n',
    )
    .option('--json', 'print one JSON document on stdout instead of text')
    // Otherwise commander lets a group's --json swallow the one after a subcommand.
    .enablePositionalOptions()
    // Commander exits the process itself unless told otherwise; index.ts decides the exit code.
    .exitOverride()
    .configureOutput({
      // With --json the error is reported in the JSON document instead.
      outputError: (text, write) => {
        if (!options.json) write(text)
      },
    })
    .showHelpAfterError(options.json ? false : '(add --help for usage)')
  defineMigrate(program)
  defineBackup(program)
  defineRestore(program)
  defineCatalog(program)
  defineOrg(program)
  defineAgreement(program)
  defineKey(program)
  defineStudents(program)
  defineSchools(program)
  defineRoster(program)
  defineLinks(program)
  defineProgress(program)
  defineDisclosures(program)
  defineOperator(program)
  defineMail(program)
  defineLti(program)
  return program
}
