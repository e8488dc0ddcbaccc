/**
 * `curriculum catalog case-import <package> [dir] --framework <name>`: a framework's CASE 1.1
 * package (a CFPackage, as a CASE server serves it) becomes its map, `<dir>/case/<name>.json`,
 * which the next `catalog import` publishes with the lessons. It writes a file of the catalog
 * folder, to be reviewed and committed like a lesson, and touches no database: like `catalog
 * validate` it leaves no audit row, and `catalog import` records the publication.
 */
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { type Command, InvalidArgumentError } from 'commander'
import { loadConfig } from '../../../config.js'
import { FRAMEWORK_NAME } from '../../../domain/standard-reference.js'
import { act } from '../../command-action.js'
import { defineCommand } from '../../options.js'
import { CliError, type CommandResult, plural } from '../../output.js'

function frameworkOption(text: string): string {
  if (!FRAMEWORK_NAME.test(text))
    throw new InvalidArgumentError("expected the framework as lessons' standards name it: lower case, e.g. csta.")
  return text
}

export function defineCatalogCaseImport(catalog: Command): void {
  defineCommand(
    catalog,
    'case-import <package> [dir]',
    "Write a framework's CASE map (<dir>/case/<framework>.json) from a CASE 1.1 CFPackage JSON file, " +
      'keeping only the items that isChildOf shows belong to its document; touches no database',
    [
      'curriculum catalog case-import csta-cfpackage.json --framework csta      # CATALOG_DIR, default ./catalog',
      'curriculum catalog case-import csta-cfpackage.json ./catalog --framework csta --json',
    ],
  )
    .requiredOption('--framework <name>', "the framework as lessons' standards name it, e.g. csta", frameworkOption)
    .action(act(caseImport))
}

/** Writes `text` to `file` whole or not at all: a reader sees the old map or the new one. */
function writeWhole(file: string, text: string): void {
  const temporary = `${file}.${randomBytes(6).toString('hex')}.tmp`
  try {
    fs.writeFileSync(temporary, text, { flag: 'wx' })
    fs.renameSync(temporary, file)
  } catch (error) {
    fs.rmSync(temporary, { force: true })
    throw new CliError(`cannot write ${file}: ${(error as Error).message}`)
  }
}

async function caseImport(command: Command): Promise<CommandResult> {
  const [packageFile, dirArgument] = command.processedArgs as [string, string | undefined]
  const { framework } = command.opts<{ framework: string }>()
  const dir = dirArgument ?? loadConfig().catalogDir
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory())
    throw new CliError(`${dir}: catalog folder not found; nothing was written`)

  const { readCasePackage, readPackageText } = await import('../../../catalog/case-package.js')
  const { CASE_FOLDER, caseMapText } = await import('../../../catalog/case-map.js')
  let text: string
  try {
    text = readPackageText(packageFile)
  } catch (error) {
    throw new CliError(`${(error as Error).message}; nothing was written`)
  }
  const result = readCasePackage(text)
  if (!result.ok) {
    const count = plural(result.problems.length + result.more, 'problem')
    const listed = result.more > 0 ? ` (the first ${result.problems.length} listed)` : ''
    throw new CliError(
      `${packageFile}: ${count}${listed}; nothing was written`,
      result.problems.map((problem) => ({
        file: packageFile,
        ...(problem.path === '' ? {} : { field: problem.path }),
        message: problem.message,
      })),
    )
  }

  const file = path.join(dir, CASE_FOLDER, `${framework}.json`)
  const replaced = fs.existsSync(file)
  fs.mkdirSync(path.dirname(file), { recursive: true })
  writeWhole(file, caseMapText(result.map))

  const { document, codes } = result.map
  const coverage = await catalogCoverage(dir, framework, codes)
  const lines = [
    `${replaced ? 'replaced' : 'wrote'} ${file}: ${plural(codes.size, 'code')} of "${document.title}" ` +
      `(CASE document ${document.identifier}); ${plural(result.uncoded, 'item')} without a code not needed`,
    ...(result.leftOut.length === 0
      ? []
      : [
          `warning: ${plural(result.leftOut.length, 'item')} with a code left out, ` +
            'not shown to belong to the document:',
          ...result.leftOut.map((item) => `  ${item.path}: ${item.message}`),
        ]),
    coverage.text,
  ]
  return {
    data: {
      file,
      framework,
      replaced,
      document,
      codes: codes.size,
      items: result.items,
      uncoded: result.uncoded,
      leftOut: result.leftOut,
      catalog: coverage.data,
    },
    text: lines,
  }
}

/** Which of the catalog's codes of `framework` the map gives an identifier, to show what the next import gains. */
async function catalogCoverage(
  dir: string,
  framework: string,
  codes: ReadonlyMap<string, unknown>,
): Promise<{ text: string; data: Record<string, unknown> }> {
  const { readCatalogDir } = await import('../../../catalog/catalog-files.js')
  const read = readCatalogDir(dir)
  if (!read.ok) {
    return {
      text: `the catalog folder has ${plural(read.problems.length, 'problem')}: see curriculum catalog validate ${dir}`,
      data: { valid: false },
    }
  }
  const named = new Set(read.catalog.lessons.flatMap((lesson) => lesson.standards[framework] ?? []))
  const without = [...named].filter((code) => !codes.has(code)).sort()
  const text =
    named.size === 0
      ? `no lesson names a ${framework} code yet`
      : without.length === 0
        ? `every ${framework} code the lessons name (${named.size}) has an identifier`
        : `${named.size - without.length} of the ${plural(named.size, `${framework} code`)} the lessons name ` +
          `have an identifier; without one: ${without.join(', ')}`
  return { text, data: { valid: true, codes: named.size, withoutIdentifier: without } }
}
