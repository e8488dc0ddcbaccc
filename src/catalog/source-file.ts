/** One catalog file parsed as YAML, with line lookup and the problems found in it. */
import { isMap, isScalar, isSeq, LineCounter, type Node, parseDocument, type YAMLMap } from 'yaml'

export interface CatalogProblem {
  /** Path relative to the catalog folder, with forward slashes. */
  file: string
  line: number
  message: string
}

/** A YAML document with line lookup, and a sink for the problems found in it. */
export class SourceFile {
  readonly problems: CatalogProblem[] = []
  readonly #lines = new LineCounter()
  readonly root: Node | null

  constructor(
    readonly name: string,
    text: string,
  ) {
    const doc = parseDocument(text, { lineCounter: this.#lines, uniqueKeys: true, prettyErrors: false })
    for (const error of doc.errors) {
      this.problems.push({
        file: name,
        line: this.#lines.linePos(error.pos[0]).line,
        message: `YAML syntax: ${error.message.split('\n')[0]}`,
      })
    }
    this.root = doc.errors.length > 0 ? null : ((doc.contents as Node | null) ?? null)
  }

  lineOf(node: Node | null | undefined): number {
    const offset = node?.range?.[0]
    return offset === undefined ? 1 : this.#lines.linePos(offset).line
  }

  report(node: Node | null | undefined, message: string): void {
    this.problems.push({ file: this.name, line: this.lineOf(node), message })
  }

  /** The fields of a mapping, after reporting any field not in `allowed` and any missing required one. */
  fields(
    node: Node | null,
    what: string,
    required: readonly string[],
    optional: readonly string[] = [],
  ): Map<string, Node> | null {
    if (!isMap(node)) {
      this.report(node, `${what} must be a mapping of fields`)
      return null
    }
    const out = new Map<string, Node>()
    for (const pair of (node as YAMLMap<unknown, unknown>).items) {
      const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key)
      if (!required.includes(key) && !optional.includes(key)) {
        this.report(
          pair.key as Node,
          `${what} has unknown field "${key}"; allowed: ${[...required, ...optional].join(', ')}`,
        )
        continue
      }
      out.set(key, pair.value as Node)
    }
    for (const key of required) if (!out.has(key)) this.report(node, `${what} is missing required field "${key}"`)
    return out
  }

  string(node: Node | undefined, what: string, maxLength = 500): string | null {
    if (node === undefined) return null
    if (!isScalar(node) || typeof node.value !== 'string' || node.value.trim() === '') {
      this.report(node, `${what} must be a non-empty string`)
      return null
    }
    if (node.value.length > maxLength) {
      this.report(node, `${what} must be at most ${maxLength} characters`)
      return null
    }
    return node.value
  }

  /** A list of non-empty strings with a length in [min, max]. */
  strings(node: Node | undefined, what: string, min: number, max: number, maxLength = 500): string[] | null {
    if (node === undefined) return null
    if (!isSeq(node)) {
      this.report(node, `${what} must be a list`)
      return null
    }
    const values: string[] = []
    for (const item of node.items as Node[]) {
      const value = this.string(item, `each item of ${what}`, maxLength)
      if (value !== null) values.push(value)
    }
    if (node.items.length < min || node.items.length > max) {
      this.report(node, `${what} must have from ${min} to ${max} items (has ${node.items.length})`)
      return null
    }
    return values.length === node.items.length ? values : null
  }
}
