/** `curriculum progress ...`: lesson progress brought over from another system. */
import type { Command } from 'commander'
import { defineGroup } from '../../options.js'
import { defineProgressImport } from './import.js'

export function defineProgress(program: Command): void {
  const progress = defineGroup(
    program,
    'progress',
    'Import lesson progress for existing students',
    'curriculum progress import progress.csv',
  )
  defineProgressImport(progress)
}
