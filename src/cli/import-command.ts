/**
 * `<what> import <file>`: the command line shared by the imports; what differs between them
 * lives in their RecordImportSpec (imports/record-spec.ts). An import that can end partners'
 * access asks first (confirm.ts).
 */
import { type Command, Option } from 'commander'
import { systemClock } from '../clock.js'
import type { Audit } from './audit.js'
import { act } from './command-action.js'
import { ImportStopped, runRecordImport } from '../imports/record-import.js'
import type { RecordImportSpec } from '../imports/record-spec.js'
import { RECORD_FORMATS, type RecordFormat } from '../imports/records.js'
import { confirmChange, type PendingChange, withConfirmation } from './confirm.js'
import { defineCommand } from './options.js'
import { CliError, type CommandResult, plural } from './output.js'
import { ProgressLine } from './progress-bar.js'
import { formatOf } from './record-format.js'
import { withStorage } from './storage-session.js'

export function defineImportCommand<Row, Context>(
  group: Command,
  spec: RecordImportSpec<Row, Context, PendingChange>,
  description: string,
  examples: readonly string[],
): Command {
  const command = defineCommand(group, 'import <file>', description, examples, {
    audit: spec.audit.action,
  }).addOption(
    new Option('--format <format>', 'file format; by default taken from the extension (.csv, .jsonl, .ndjson)').choices(
      RECORD_FORMATS,
    ),
  )
  for (const option of spec.options ?? []) command.option(option.flags, option.description)
  if (spec.ending !== undefined) withConfirmation(command, spec.ending.yes)
  return command.action(act((command, audit) => importFile(spec, command, audit)))
}

async function importFile<Row, Context>(
  spec: RecordImportSpec<Row, Context, PendingChange>,
  command: Command,
  audit: Audit,
): Promise<CommandResult> {
  const [file] = command.processedArgs as [string]
  const options = command.opts<{ format?: RecordFormat }>()
  const format = formatOf(file, options.format)
  const started = performance.now()
  let stopped: CommandResult | undefined
  const result = await withStorage(({ storage }) =>
    runRecordImport(spec, storage, {
      file,
      format,
      now: systemClock.now(),
      options,
      actor: audit.actor,
      record: (db, changed) => audit.record(db, spec.audit.target, { ...changed }),
      async confirm(change) {
        const confirmed = await confirmChange(command, change)
        if (!confirmed.write) stopped = confirmed.result
        return confirmed.write
      },
      progress: new ProgressLine(),
    }),
  ).catch((error: unknown) => {
    throw error instanceof ImportStopped ? new CliError(error.message) : error
  })
  if (!result.ok)
    throw new CliError(`${file}: ${plural(result.problems.length, 'problem')}; nothing was imported`, result.problems)
  if (stopped !== undefined) return stopped
  const { summary } = result
  const seconds = ((performance.now() - started) / 1000).toFixed(1)
  return {
    data: { ...summary },
    text: `imported ${plural(summary.rows, spec.noun)} from ${file} in ${seconds} s`,
  }
}
