/**
 * `<what> import <file>`: the command line shared by the imports; what differs between them
 * lives in their ImportSpec. An import that can end partners' access asks first (confirm.ts).
 */
import { type Command, Option } from 'commander'
import { systemClock } from '../clock.js'
import { act } from './command-action.js'
import { confirmChange, withConfirmation } from './confirm.js'
import { type ImportSpec, runImport } from './import-runner.js'
import { defineCommand } from './options.js'
import { type CommandResult, plural } from './output.js'
import { formatOf, RECORD_FORMATS, type RecordFormat } from './records.js'
import { withStorage } from './storage-session.js'

export function defineImportCommand<Row, Context>(
  group: Command,
  spec: ImportSpec<Row, Context>,
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
  return command.action(
    act(async (command, audit) => {
      const [file] = command.processedArgs as [string]
      const options = command.opts<{ format?: RecordFormat }>()
      const format = formatOf(file, options.format)
      const started = performance.now()
      let stopped: CommandResult | undefined
      const summary = await withStorage(({ storage }) =>
        runImport(spec, storage, {
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
        }),
      )
      if (stopped !== undefined) return stopped
      const seconds = ((performance.now() - started) / 1000).toFixed(1)
      return {
        data: { ...summary },
        text: `imported ${plural(summary.rows, spec.noun)} from ${file} in ${seconds} s`,
      }
    }),
  )
}
