/**
 * `curriculum roster import <folder-or-zip>`: a district's OneRoster 1.1 or 1.2 CSV export, bulk
 * or delta, through the one import run (imports/import-run.ts) with the OneRoster format
 * (cases/roster-import/spec.ts: roster/oneroster.ts reads it, cases/roster-import/import.ts imports it).
 * It always shows the preview first; `--dry-run` stops there, and a delta that would erase
 * students stops there too unless `--confirm-erase` says to erase them. An import that takes
 * students out of schools or erases asks first (confirm.ts): a wrong folder would end a district's
 * sharing. The import is one transaction with its audit row, which holds counts and ids only.
 */
import path from 'node:path'
import { type Command, Option } from 'commander'
import { systemClock } from '../../../clock.js'
import { TIER_IDS, type TierId } from '../../../domain/tiers.js'
import type { RosterPreview } from '../../../cases/roster-import/import.js'
import type { Audit } from '../../audit.js'
import { act } from '../../command-action.js'
import { confirmChange, withConfirmation } from '../../confirm.js'
import { defineCommand } from '../../options.js'
import { CliError, type CommandResult, plural, writeText } from '../../output.js'
import { count, ProgressLine } from '../../progress-bar.js'
import { countLines, endingLine, endsAccess, previewLines } from './roster-preview.js'
import { withStorage } from '../../storage-session.js'

interface RosterOptions {
  tier?: TierId
  dryRun?: boolean
  confirmErase?: boolean
}

export function defineRosterImport(roster: Command): void {
  const command = defineCommand(
    roster,
    'import <source>',
    'Preview, then import, the students and schools of a OneRoster CSV export, all or nothing; an import that ' +
      'takes students out of schools or erases asks first. First names only: family names, e-mails and every ' +
      'other personal field are never read into the service.',
    [
      'curriculum roster import sis-export.zip --dry-run      # the preview; writes nothing',
      'curriculum roster import sis-export/ --tier builder     # asks first if students would leave schools',
      'curriculum roster import nightly.zip --yes --json       # a script: no terminal to ask on',
      'curriculum roster import delta.zip --confirm-erase --yes --json',
    ],
    { audit: 'roster.import' },
  )
    .addOption(new Option('--tier <tier>', 'tier of new students (default: explorer)').choices(TIER_IDS))
    .option('--confirm-erase', 'erase the students a delta marks tobedeleted, with the rest of the delta')
  withConfirmation(command, 'import, ending what the preview shows,')
  command.action(act(importRoster))
}

async function importRoster(command: Command, audit: Audit): Promise<CommandResult> {
  const [source] = command.processedArgs as [string]
  const options = command.opts<RosterOptions>()
  const started = performance.now()
  const bar = new ProgressLine()
  try {
    bar.update('reading the export', true)
    const [{ rosterImport }, { runImport }] = await Promise.all([
      import('../../../cases/roster-import/spec.js'),
      import('../../../imports/import-run.js'),
    ])
    const spec = rosterImport({
      source,
      open: (work) =>
        withStorage(({ storage }) => {
          bar.update('comparing with the service', true)
          return work(storage)
        }),
      options: {
        now: systemClock.now(),
        ...(options.tier === undefined ? {} : { tier: options.tier }),
        confirmErase: options.confirmErase === true,
        progress: (phase, done, total) => bar.update(`${phase}: ${count(done)}/${count(total)}`),
      },
      record: (trx, detail) => audit.record(trx, `roster:${path.basename(source)}`, detail),
    })
    let stopped: CommandResult | undefined
    const result = await runImport(spec, async (preview) => {
      bar.clear()
      const confirmed = await confirmPreview(command, source, preview)
      if (!confirmed.write) stopped = confirmed.result
      return confirmed.write
    })
    if (result.kind === 'refused') {
      const more = result.more > 0 ? ` (${count(result.more)} more not shown)` : ''
      const total = result.problems.length + result.more
      throw new CliError(`${source}: ${plural(total, 'problem')}${more}; nothing was imported`, result.problems)
    }
    if (result.kind === 'previewed') return stopped!
    const { problems: _problems, moreProblems: _more, ...counts } = result.checked
    const { outcome, log } = result.outcome
    const seconds = Number(((performance.now() - started) / 1000).toFixed(1))
    return {
      data: { source, preview: counts, ...outcome, seconds },
      text: [
        `imported OneRoster ${result.checked.version} ${result.checked.kind} export ${source} in ${seconds} s`,
        ...countLines(outcome),
        `links to partners: ${count(outcome.links.made)} made, ${count(outcome.links.ended)} ended ` +
          `(each told); ${plural(outcome.erased.length, 'student')} erased; ` +
          `${plural(outcome.webhooks, 'webhook delivery', 'webhook deliveries')} queued`,
        ...(log === 'busy' ? ['the SQLite WAL file was busy and is not truncated yet'] : []),
      ],
    }
  } finally {
    bar.clear()
  }
}

/**
 * Shows the preview and asks (confirm.ts); a delta that would erase students stops here unless
 * --confirm-erase (or --dry-run, which stops anyway) was given.
 */
async function confirmPreview(command: Command, source: string, preview: RosterPreview) {
  const options = command.opts<RosterOptions>()
  const { problems: _problems, moreProblems: _more, ...counts } = preview
  const erasing = preview.students.toErase
  if (erasing > 0 && options.confirmErase !== true && options.dryRun !== true) {
    if (command.optsWithGlobals().json !== true) writeText(previewLines(preview))
    throw new CliError(
      `the delta would erase ${plural(erasing, 'student')} (tobedeleted); nothing was imported. ` +
        'Run it again with --confirm-erase to import it and erase them (it then asks, or takes --yes)',
      [],
      1,
      { preview: counts },
    )
  }
  // The preview first, as with --dry-run; the import's own counts follow it.
  const ends = endsAccess(preview)
  return confirmChange(command, {
    lines: [...previewLines(preview), ...(ends ? [endingLine(preview)] : [])],
    data: { source, preview: counts },
    ends,
    action: 'import it',
  })
}
