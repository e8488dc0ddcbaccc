/**
 * A framework's CASE map, `<catalog>/case/<framework>.json`: each code of the framework
 * (`1B-AP-08`) to the identifier and URI of its item in the framework's CASE document, and that
 * document. `curriculum catalog case-import` writes it from a CFPackage (case-package.ts); the
 * catalog reader attaches its entries to the lessons' codes. A code the map lacks has no
 * identifier: none is ever made up.
 */
import fs from 'node:fs'
import path from 'node:path'
import { isMap, isScalar, type Node, type YAMLMap } from 'yaml'
import { FRAMEWORK_NAME } from '../domain/standard-reference.js'
import { UUID } from '../domain/uuid.js'
import { type CatalogProblem, SourceFile } from './source-file.js'

export interface CaseItemRef {
  readonly identifier: string
  readonly uri: string
}

export interface CaseDocumentRef extends CaseItemRef {
  readonly title: string
}

export interface CaseMap {
  readonly document: CaseDocumentRef
  /** Code to item. */
  readonly codes: ReadonlyMap<string, CaseItemRef>
}

/** The folder of the maps inside the catalog folder. */
export const CASE_FOLDER = 'case'

/** The longest code and URI kept: a code this long is no code, a URI this long no link. */
export const MAX_CODE_LENGTH = 200
export const MAX_URI_LENGTH = 2048
export const MAX_TITLE_LENGTH = 1000

/** C0 and C1 control characters: never part of a code or title, and never echoed to a terminal raw. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/
/** What RFC 3986 leaves out of a URI: space, controls, anything not ASCII, and `"<>\^`{|}`. */
const NOT_IN_URI = /[^\x21-\x7e]|["<>\\^`{|}]/

/** Whether `value` is an absolute http(s) URI a partner may follow, written as RFC 3986 writes one. */
export function isHttpUri(value: string): boolean {
  if (value.length > MAX_URI_LENGTH || NOT_IN_URI.test(value)) return false
  try {
    const url = new URL(value)
    return url.protocol === 'https:' || url.protocol === 'http:'
  } catch {
    return false
  }
}

/** `value` (its first 60 characters) quoted for a message, every control character escaped. */
export function quoted(value: string): string {
  return JSON.stringify(value.slice(0, 60)).replace(
    /[\u007f-\u009f]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  )
}

/** Why `code` cannot be a map's key, or undefined when it can. */
export function codeProblem(code: string): string | undefined {
  if (code.length === 0) return 'is empty'
  if (code.length > MAX_CODE_LENGTH) return `is longer than ${MAX_CODE_LENGTH} characters`
  if (code.trim() !== code) return 'has spaces at its start or end'
  if (CONTROL.test(code)) return 'holds a control character'
  return undefined
}

/** Why `title` cannot be a document's title, or undefined when it can. */
export function titleProblem(title: string): string | undefined {
  if (title.trim() === '' || title.length > MAX_TITLE_LENGTH)
    return `must be a title of 1 to ${MAX_TITLE_LENGTH} characters`
  if (CONTROL.test(title)) return 'must not hold a control character'
  return undefined
}

/** Code-unit order: the same in every locale, so the file's bytes are too. */
function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

/** The map as its file holds it: keys sorted at every level, two-space indent, a final newline. */
export function caseMapText(map: CaseMap): string {
  const q = (value: string) => JSON.stringify(value)
  const codes = [...map.codes.keys()].sort(byCodeUnits)
  const entries = codes.map((code) => {
    const item = map.codes.get(code)!
    return `    ${q(code)}: {\n      "identifier": ${q(item.identifier)},\n      "uri": ${q(item.uri)}\n    }`
  })
  const { identifier, title, uri } = map.document
  return (
    `{\n  "codes": ${entries.length === 0 ? '{}' : `{\n${entries.join(',\n')}\n  }`},\n` +
    `  "document": {\n    "identifier": ${q(identifier)},\n    "title": ${q(title)},\n    "uri": ${q(uri)}\n  }\n}\n`
  )
}

/** A string scalar's value, or null after reporting what is wrong with it (an absent one is reported as missing). */
function text(source: SourceFile, node: Node | undefined, what: string): string | null {
  if (node === undefined) return null
  if (!isScalar(node) || typeof node.value !== 'string') {
    source.report(node, `${what} must be a string`)
    return null
  }
  return node.value
}

function readRef(source: SourceFile, node: Node | undefined, what: string, withTitle: boolean): CaseDocumentRef | null {
  const fields = source.fields(node ?? null, what, withTitle ? ['identifier', 'title', 'uri'] : ['identifier', 'uri'])
  if (fields === null) return null
  const identifier = text(source, fields.get('identifier'), `${what}'s identifier`)
  const uri = text(source, fields.get('uri'), `${what}'s uri`)
  const title = withTitle ? text(source, fields.get('title'), `${what}'s title`) : ''
  if (identifier !== null && !UUID.test(identifier))
    source.report(fields.get('identifier'), `${what}'s identifier must be a UUID (got ${quoted(identifier)})`)
  const badTitle = withTitle && title !== null ? titleProblem(title) : undefined
  if (badTitle !== undefined) source.report(fields.get('title'), `${what}'s title ${badTitle}`)
  if (uri !== null && !isHttpUri(uri))
    source.report(
      fields.get('uri'),
      `${what}'s uri must be an http or https URI of at most ${MAX_URI_LENGTH} characters`,
    )
  if (identifier === null || uri === null || title === null || badTitle !== undefined) return null
  if (!UUID.test(identifier) || !isHttpUri(uri)) return null
  return { identifier, uri, title }
}

/** The map a file holds, or null with its problems reported on `source`. */
export function readCaseMap(source: SourceFile): CaseMap | null {
  const fields = source.fields(source.root, 'a CASE map', ['codes', 'document'])
  if (fields === null) return null
  const document = readRef(source, fields.get('document'), 'document', true)
  const codesNode = fields.get('codes')
  const codes = new Map<string, CaseItemRef>()
  if (codesNode !== undefined && !isMap(codesNode))
    source.report(codesNode, 'codes must map each code to {"identifier", "uri"}')
  else if (codesNode !== undefined) {
    const seen = new Map<string, string>()
    for (const pair of (codesNode as YAMLMap<unknown, unknown>).items) {
      const code = text(source, pair.key as Node, 'a code')
      if (code === null) continue
      const problem = codeProblem(code)
      if (problem !== undefined) {
        source.report(pair.key as Node, `the code ${quoted(code)} ${problem}`)
        continue
      }
      const item = readRef(source, pair.value as Node, `code "${code}"`, false)
      if (item === null) continue
      const key = item.identifier.toLowerCase()
      const other = seen.get(key)
      if (other !== undefined)
        source.report(
          pair.value as Node,
          `code "${code}" has the identifier of code "${other}": each item has one code`,
        )
      seen.set(key, code)
      codes.set(code, { identifier: item.identifier, uri: item.uri })
    }
  }
  if (source.problems.length > 0 || document === null) return null
  return { document, codes }
}

/**
 * Every map of `<dir>/case/`, by framework; an absent folder holds none. Problems are pushed on
 * `problems`, named by their path in the catalog folder.
 */
export function readCaseMaps(dir: string, problems: CatalogProblem[]): Map<string, CaseMap> {
  const maps = new Map<string, CaseMap>()
  const folder = path.join(dir, CASE_FOLDER)
  if (!fs.existsSync(folder)) return maps
  for (const entry of fs.readdirSync(folder, { withFileTypes: true }).sort((a, b) => byCodeUnits(a.name, b.name))) {
    const name = `${CASE_FOLDER}/${entry.name}`
    const framework = entry.name.endsWith('.json') ? entry.name.slice(0, -'.json'.length) : ''
    if (!entry.isFile() || !FRAMEWORK_NAME.test(framework)) {
      problems.push({
        file: name,
        line: 1,
        message:
          `${CASE_FOLDER}/ holds one <framework>.json per framework, ` +
          "named as lessons' standards name it (e.g. csta.json)",
      })
      continue
    }
    const source = new SourceFile(name, fs.readFileSync(path.join(folder, entry.name), 'utf8'))
    const map = source.root === null ? null : readCaseMap(source)
    if (source.root === null && source.problems.length === 0) source.report(null, 'the file is empty')
    problems.push(...source.problems)
    if (map !== null) maps.set(framework, map)
  }
  return maps
}
