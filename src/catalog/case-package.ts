/**
 * A CASE 1.1 package (a CFPackage: its CFDocument, CFItems and CFAssociations) read into a
 * framework's CASE map (case-map.ts). An item enters the map only when `isChildOf` associations
 * (origin the child, destination its parent) lead from it up to the package's document: an item
 * they do not reach is left out with a warning, since nothing shows it is part of that framework.
 * Its code is the item's `humanCodingScheme`, its identifier and URI the item's own, copied as
 * they are. Anything malformed refuses the whole package, so a map is written whole or not at all.
 */
import fs from 'node:fs'
import { UUID } from '../domain/uuid.js'
import {
  type CaseItemRef,
  type CaseMap,
  codeProblem,
  isHttpUri,
  MAX_URI_LENGTH,
  quoted,
  titleProblem,
} from './case-map.js'

/** Larger than any framework's package (a state's every subject is tens of megabytes), small enough to read whole. */
export const MAX_PACKAGE_BYTES = 64 * 1024 * 1024

/** At most this many problems are listed; the rest are counted. */
const MAX_PROBLEMS = 50

export interface CasePackageProblem {
  /** Where in the package, as a JSON path (`CFItems[3].identifier`), or `""` for the whole. */
  path: string
  message: string
}

export type CasePackageResult =
  | {
      ok: true
      map: CaseMap
      /** Items in the package. */
      items: number
      /** Items without a code (headings such as a strand), which no lesson can name. */
      uncoded: number
      /** Items with a code left out because no isChildOf path leads from them to the document. */
      leftOut: CasePackageProblem[]
    }
  | { ok: false; problems: CasePackageProblem[]; more: number }

class Problems {
  readonly list: CasePackageProblem[] = []
  more = 0
  add(path: string, message: string): void {
    if (this.list.length < MAX_PROBLEMS) this.list.push({ path, message })
    else this.more++
  }
  get count(): number {
    return this.list.length + this.more
  }
}

type Json = Record<string, unknown>

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value)

/** The text of a package file, refused before it is read when it is not a file or too large. */
export function readPackageText(file: string): string {
  let stat: fs.Stats
  try {
    stat = fs.statSync(file)
  } catch (error) {
    throw new Error(`cannot read ${file}: ${(error as Error).message}`)
  }
  if (!stat.isFile()) throw new Error(`${file} is not a file`)
  if (stat.size > MAX_PACKAGE_BYTES)
    throw new Error(
      `${file} is ${stat.size.toLocaleString('en-US')} bytes; ` +
        `a CFPackage is read up to ${MAX_PACKAGE_BYTES.toLocaleString('en-US')}`,
    )
  const bytes = Buffer.alloc(stat.size + 1)
  const fd = fs.openSync(file, 'r')
  try {
    // Asking for one byte past the measured size tells whether the file grew meanwhile.
    let length = 0
    while (length < bytes.length) {
      const read = fs.readSync(fd, bytes, length, bytes.length - length, null)
      if (read === 0) break
      length += read
    }
    if (length > stat.size) throw new Error(`${file} changed while it was read; read it again once it is complete`)
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(0, length))
  } catch (error) {
    if (error instanceof TypeError) throw new Error(`${file} is not UTF-8 text`)
    throw error
  } finally {
    fs.closeSync(fd)
  }
}

/** The package in `text`, read into a map; `text` is JSON, as CASE servers serve it. */
export function readCasePackage(text: string): CasePackageResult {
  let root: unknown
  try {
    root = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text)
  } catch (error) {
    // V8's message quotes the text around the fault: escaped, as a hostile file chose those bytes.
    const message = (error as Error).message.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?')
    return { ok: false, problems: [{ path: '', message: `not JSON: ${message}` }], more: 0 }
  }
  return casePackageMap(root)
}

/** A string field of `value`, or undefined after adding a problem. */
function stringField(problems: Problems, value: Json, field: string, at: string): string | undefined {
  const found = value[field]
  if (typeof found !== 'string') {
    problems.add(`${at}.${field}`, found === undefined ? 'is missing' : 'must be a string')
    return undefined
  }
  return found
}

function identifierField(problems: Problems, value: Json, at: string): string | undefined {
  const identifier = stringField(problems, value, 'identifier', at)
  if (identifier === undefined) return undefined
  if (!UUID.test(identifier)) {
    problems.add(`${at}.identifier`, `must be a UUID, as CASE identifiers are (got ${quoted(identifier)})`)
    return undefined
  }
  return identifier
}

function uriField(problems: Problems, value: Json, at: string): string | undefined {
  const uri = stringField(problems, value, 'uri', at)
  if (uri === undefined) return undefined
  if (!isHttpUri(uri)) {
    problems.add(`${at}.uri`, `must be an http or https URI of at most ${MAX_URI_LENGTH} characters`)
    return undefined
  }
  return uri
}

/** The identifier of an association's end (`originNodeURI`, `destinationNodeURI`), in lower case. */
function nodeField(problems: Problems, association: Json, field: string, at: string): string | undefined {
  const node = association[field]
  if (!isObject(node)) {
    problems.add(`${at}.${field}`, node === undefined ? 'is missing' : 'must be an object with an identifier')
    return undefined
  }
  return identifierField(problems, node, `${at}.${field}`)?.toLowerCase()
}

interface Item extends CaseItemRef {
  code: string | undefined
  at: string
}

/** The package `root` (JSON already parsed) read into a map. */
export function casePackageMap(root: unknown): CasePackageResult {
  const problems = new Problems()
  const refuse = (): CasePackageResult => ({ ok: false, problems: problems.list, more: problems.more })
  if (!isObject(root)) {
    problems.add('', 'a CFPackage is a JSON object with CFDocument, CFItems and CFAssociations')
    return refuse()
  }
  for (const field of ['CFDocument', 'CFItems', 'CFAssociations'])
    if (root[field] === undefined)
      problems.add(field, 'is missing: is this a CFPackage (/ims/case/v1p1/CFPackages/<id>)?')
  if (problems.count > 0) return refuse()

  const documentJson = root.CFDocument
  if (!isObject(documentJson)) problems.add('CFDocument', 'must be an object')
  const documentIdentifier = isObject(documentJson) ? identifierField(problems, documentJson, 'CFDocument') : undefined
  const documentUri = isObject(documentJson) ? uriField(problems, documentJson, 'CFDocument') : undefined
  const title = isObject(documentJson) ? stringField(problems, documentJson, 'title', 'CFDocument') : undefined
  const badTitle = title === undefined ? undefined : titleProblem(title)
  if (badTitle !== undefined) problems.add('CFDocument.title', badTitle)

  const items = readItems(problems, root.CFItems)
  const parents = readParents(problems, root.CFAssociations)
  const documentKey = documentIdentifier?.toLowerCase()
  if (documentKey !== undefined) {
    for (const item of items)
      if (item.identifier.toLowerCase() === documentKey)
        problems.add(`${item.at}.identifier`, "is the CFDocument's identifier: an item cannot be its document")
  }
  if (problems.count > 0 || documentIdentifier === undefined || documentUri === undefined || title === undefined)
    return refuse()

  const cycle = findCycle(parents)
  if (cycle !== undefined) {
    const names = new Map(items.map((item) => [item.identifier.toLowerCase(), item.code ?? item.identifier]))
    problems.add(
      'CFAssociations',
      `isChildOf runs in a circle: ${cycle.map((id) => names.get(id) ?? id).join(' -> ')}; a framework is a tree`,
    )
    return refuse()
  }

  const reached = reachedFrom(documentKey!, parents)
  const codes = new Map<string, CaseItemRef>()
  const codedAt = new Map<string, string>()
  const leftOut: CasePackageProblem[] = []
  let uncoded = 0
  for (const item of items) {
    if (item.code === undefined) {
      uncoded++
      continue
    }
    if (!reached.has(item.identifier.toLowerCase())) {
      const code = quoted(item.code)
      leftOut.push({
        path: item.at,
        message: `left out ${code} (${item.identifier}): no isChildOf path leads from it to the CFDocument`,
      })
      continue
    }
    const other = codedAt.get(item.code)
    if (other !== undefined) {
      problems.add(
        `${item.at}.humanCodingScheme`,
        `${quoted(item.code)} is also the code of ${other}: a code names one item`,
      )
      continue
    }
    codedAt.set(item.code, item.at)
    codes.set(item.code, { identifier: item.identifier, uri: item.uri })
  }
  if (problems.count === 0 && codes.size === 0)
    problems.add('CFItems', 'no item with a code (humanCodingScheme) belongs to the CFDocument: nothing to map')
  if (problems.count > 0) return refuse()
  return {
    ok: true,
    map: { document: { identifier: documentIdentifier, uri: documentUri, title }, codes },
    items: items.length,
    uncoded,
    leftOut,
  }
}

function readItems(problems: Problems, value: unknown): Item[] {
  if (!Array.isArray(value)) {
    problems.add('CFItems', 'must be an array of items')
    return []
  }
  const items: Item[] = []
  const seen = new Map<string, string>()
  for (const [index, item] of value.entries()) {
    const at = `CFItems[${index}]`
    if (!isObject(item)) {
      problems.add(at, 'must be an object')
      continue
    }
    const identifier = identifierField(problems, item, at)
    const uri = uriField(problems, item, at)
    const coding = item.humanCodingScheme
    let code: string | undefined
    if (typeof coding === 'string' && coding !== '') {
      const problem = codeProblem(coding)
      if (problem === undefined) code = coding
      else problems.add(`${at}.humanCodingScheme`, `${quoted(coding)} ${problem}`)
    } else if (coding !== undefined && coding !== null && coding !== '')
      problems.add(`${at}.humanCodingScheme`, 'must be a string')
    if (identifier === undefined || uri === undefined) continue
    const other = seen.get(identifier.toLowerCase())
    if (other !== undefined) {
      problems.add(`${at}.identifier`, `is also the identifier of ${other}: each item has its own`)
      continue
    }
    seen.set(identifier.toLowerCase(), at)
    items.push({ identifier, uri, code, at })
  }
  return items
}

/** Each node's parents by `isChildOf`, identifiers in lower case; other association types are not read. */
function readParents(problems: Problems, value: unknown): Map<string, string[]> {
  const parents = new Map<string, string[]>()
  if (!Array.isArray(value)) {
    problems.add('CFAssociations', 'must be an array of associations')
    return parents
  }
  for (const [index, association] of value.entries()) {
    const at = `CFAssociations[${index}]`
    if (!isObject(association)) {
      problems.add(at, 'must be an object')
      continue
    }
    const type = association.associationType
    if (typeof type !== 'string') {
      problems.add(`${at}.associationType`, type === undefined ? 'is missing' : 'must be a string')
      continue
    }
    if (type !== 'isChildOf') continue
    const child = nodeField(problems, association, 'originNodeURI', at)
    const parent = nodeField(problems, association, 'destinationNodeURI', at)
    if (child === undefined || parent === undefined) continue
    const list = parents.get(child)
    if (list === undefined) parents.set(child, [parent])
    else if (!list.includes(parent)) list.push(parent)
  }
  return parents
}

/**
 * A circle of isChildOf (each node the child of the next, the last of the first), or undefined.
 * Iterative, so a hostile chain a million deep cannot exhaust the stack.
 */
export function findCycle(parents: ReadonlyMap<string, readonly string[]>): string[] | undefined {
  const DONE = 2
  const ON_PATH = 1
  const state = new Map<string, number>()
  for (const start of parents.keys()) {
    if (state.has(start)) continue
    const path: string[] = [start]
    const next: number[] = [0]
    state.set(start, ON_PATH)
    while (path.length > 0) {
      const node = path[path.length - 1]!
      const up = parents.get(node) ?? []
      const index = next[next.length - 1]!
      if (index === up.length) {
        state.set(node, DONE)
        path.pop()
        next.pop()
        continue
      }
      next[next.length - 1] = index + 1
      const parent = up[index]!
      const seen = state.get(parent)
      if (seen === ON_PATH) return [...path.slice(path.indexOf(parent)), parent]
      if (seen === undefined) {
        state.set(parent, ON_PATH)
        path.push(parent)
        next.push(0)
      }
    }
  }
  return undefined
}

/** Every node from which isChildOf leads up to `root`, found walking down from it. */
function reachedFrom(root: string, parents: ReadonlyMap<string, readonly string[]>): Set<string> {
  const children = new Map<string, string[]>()
  for (const [child, list] of parents) {
    for (const parent of list) {
      const below = children.get(parent)
      if (below === undefined) children.set(parent, [child])
      else below.push(child)
    }
  }
  const reached = new Set<string>()
  const queue = [root]
  while (queue.length > 0) {
    for (const child of children.get(queue.pop()!) ?? []) {
      if (reached.has(child)) continue
      reached.add(child)
      queue.push(child)
    }
  }
  return reached
}
