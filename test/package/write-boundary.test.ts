/**
 * The entry layers (src/http, src/dashboard, src/cli, src/imports) write only through src/cases/:
 * they may import storage's queries, never its writers. A writer is an exported function of
 * src/storage/ whose body, or a helper of its own module it uses, writes (`.insertInto(`,
 * `.updateTable(`, `.deleteFrom(`, a raw SQL insert, update or delete, a transaction) or uses
 * another module's writer. Read with TypeScript's parser, so comments and types do not count.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

const SRC = path.resolve(import.meta.dirname, '../../src')
const STORAGE = path.join(SRC, 'storage')
/**
 * The engines' machinery (opening a database, its write queue, backup and restore) and the
 * migrations: reached through connection.ts, not repositories, so no writers of the product's rows.
 */
const MACHINERY = ['sqlite', 'postgres', 'redis', 'migrations'].map((folder) => path.join(STORAGE, folder) + path.sep)
const ENTRY_LAYERS = ['http', 'dashboard', 'cli', 'imports', 'lti']

/**
 * Writer imports that wait for their own case, file -> names: they belong to work still under
 * way. Every entry must still be a violation, so the list only shrinks.
 */
const NOT_YET_THROUGH_CASES: Record<string, readonly string[]> = {}

const WRITE_METHODS = new Set(['insertInto', 'updateTable', 'deleteFrom', 'replaceInto', 'mergeInto', 'transaction'])
const RAW_WRITE = /\b(insert\s+(or\s+\w+\s+)?into|update\s+\S+\s+set|delete\s+from)\b/i
const BUILDER_TEXT = /\.(insertInto|updateTable|deleteFrom)\(/

function tsFiles(root: string): string[] {
  return fs
    .readdirSync(root, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
    .map((file) => path.join(root, file))
}

function parse(file: string): ts.SourceFile {
  return ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true)
}

/** The module a relative specifier names, as a .ts path, or undefined for a package. */
function resolve(from: string, specifier: string): string | undefined {
  return specifier.startsWith('.') ? path.resolve(path.dirname(from), specifier.replace(/\.js$/, '.ts')) : undefined
}

const exported = (node: ts.Node) =>
  ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword)

interface StorageModule {
  /** Top-level functions and constants by name: their nodes, and whether the module exports them. */
  declarations: Map<string, { node: ts.Node; exported: boolean }>
  /** Local name -> [module, exported name] of each value import from another storage module. */
  imports: Map<string, [string, string]>
}

function storageModule(file: string): StorageModule {
  const source = parse(file)
  const declarations = new Map<string, { node: ts.Node; exported: boolean }>()
  const imports = new Map<string, [string, string]>()
  for (const statement of source.statements) {
    if (ts.isFunctionDeclaration(statement) && statement.name)
      declarations.set(statement.name.text, { node: statement, exported: exported(statement) })
    if (ts.isVariableStatement(statement))
      for (const declaration of statement.declarationList.declarations)
        if (ts.isIdentifier(declaration.name))
          declarations.set(declaration.name.text, { node: declaration, exported: exported(statement) })
    if (ts.isImportDeclaration(statement) && ts.isStringLiteral(statement.moduleSpecifier)) {
      const target = resolve(file, statement.moduleSpecifier.text)
      const named = statement.importClause?.namedBindings
      if (target === undefined || statement.importClause?.isTypeOnly || !named || !ts.isNamedImports(named)) continue
      for (const element of named.elements)
        if (!element.isTypeOnly) imports.set(element.name.text, [target, (element.propertyName ?? element.name).text])
    }
  }
  return { declarations, imports }
}

/** Whether `node` writes by itself, and the identifiers it uses (to follow into helpers and imports). */
function scan(node: ts.Node): { writes: boolean; uses: Set<string> } {
  let writes = false
  const uses = new Set<string>()
  const visit = (n: ts.Node): void => {
    if (ts.isCallExpression(n) && ts.isPropertyAccessExpression(n.expression))
      if (WRITE_METHODS.has(n.expression.name.text)) writes = true
    if ((ts.isNoSubstitutionTemplateLiteral(n) || ts.isStringLiteral(n)) && RAW_WRITE.test(n.text)) writes = true
    if (ts.isTemplateExpression(n) && RAW_WRITE.test(n.getText())) writes = true
    if (ts.isIdentifier(n)) uses.add(n.text)
    n.forEachChild(visit)
  }
  visit(node)
  return { writes, uses }
}

/** Exported writers of every module under src/storage, by module path; followed to a fixed point. */
export function storageWriters(root = STORAGE): Map<string, Set<string>> {
  const repositories = tsFiles(root).filter((file) => !MACHINERY.some((folder) => file.startsWith(folder)))
  const modules = new Map(repositories.map((file) => [file, storageModule(file)]))
  const scans = new Map<string, Map<string, ReturnType<typeof scan>>>()
  const writers = new Map<string, Set<string>>()
  for (const [file, module] of modules) {
    scans.set(file, new Map([...module.declarations].map(([name, { node }]) => [name, scan(node)])))
    writers.set(file, new Set([...scans.get(file)!].filter(([, s]) => s.writes).map(([name]) => name)))
  }
  for (let changed = true; changed; ) {
    changed = false
    for (const [file, module] of modules) {
      const own = writers.get(file)!
      for (const [name, { uses }] of scans.get(file)!) {
        if (own.has(name)) continue
        const writes = [...uses].some((used) => {
          if (used !== name && own.has(used)) return true
          const imported = module.imports.get(used)
          return imported !== undefined && writers.get(imported[0])?.has(imported[1]) === true
        })
        if (writes) {
          own.add(name)
          changed = true
        }
      }
    }
  }
  return new Map(
    [...writers].map(([file, names]) => [
      file,
      new Set([...names].filter((name) => modules.get(file)!.declarations.get(name)!.exported)),
    ]),
  )
}

/** `import('…')`'s module, if `node` is such a call, maybe awaited or in parentheses. */
function dynamicImport(from: string, node: ts.Node | undefined): string | undefined {
  while (node && (ts.isAwaitExpression(node) || ts.isParenthesizedExpression(node))) node = node.expression
  if (node && ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
    const [specifier] = node.arguments
    return specifier && ts.isStringLiteral(specifier) ? resolve(from, specifier.text) : undefined
  }
  return undefined
}

/** The names `pattern` takes out of a module: `{ a, b: c }` takes a and b. */
function boundNames(pattern: ts.BindingName): string[] {
  if (!ts.isObjectBindingPattern(pattern)) return []
  return pattern.elements.flatMap((element) => {
    const name = element.propertyName ?? element.name
    return ts.isIdentifier(name) ? [name.text] : []
  })
}

/** Every value a module takes out of another: [module path, name], static and dynamic imports alike. */
export function importedValues(file: string): [string, string][] {
  const source = parse(file)
  const found: [string, string][] = []
  const namespaces = new Map<string, string>()
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const target = resolve(file, node.moduleSpecifier.text)
      const clause = node.importClause
      if (target !== undefined && clause && !clause.isTypeOnly && clause.namedBindings) {
        if (ts.isNamedImports(clause.namedBindings)) {
          for (const element of clause.namedBindings.elements)
            if (!element.isTypeOnly) found.push([target, (element.propertyName ?? element.name).text])
        } else namespaces.set(clause.namedBindings.name.text, target)
      }
    }
    if (ts.isVariableDeclaration(node)) {
      const target = dynamicImport(file, node.initializer)
      if (target !== undefined) {
        if (ts.isIdentifier(node.name)) namespaces.set(node.name.text, target)
        for (const name of boundNames(node.name)) found.push([target, name])
      }
      // const [{ a }, { b }] = await Promise.all([import('…'), import('…')])
      let all = node.initializer
      while (all && (ts.isAwaitExpression(all) || ts.isParenthesizedExpression(all))) all = all.expression
      if (ts.isArrayBindingPattern(node.name) && all && ts.isCallExpression(all)) {
        const [list] = all.arguments
        if (list && ts.isArrayLiteralExpression(list))
          node.name.elements.forEach((element, i) => {
            const module = dynamicImport(file, list.elements[i])
            if (module !== undefined && ts.isBindingElement(element))
              for (const name of boundNames(element.name)) found.push([module, name])
          })
      }
    }
    if (ts.isPropertyAccessExpression(node)) {
      const target =
        dynamicImport(file, node.expression) ??
        (ts.isIdentifier(node.expression) ? namespaces.get(node.expression.text) : undefined)
      if (target !== undefined) found.push([target, node.name.text])
    }
    node.forEachChild(visit)
  }
  visit(source)
  return found
}

let violationsFound: Map<string, string[]> | undefined

/** Each entry-layer module's imports of storage writers, and its own query-builder writes: file -> names. */
function violations(): Map<string, string[]> {
  if (violationsFound !== undefined) return violationsFound
  const writers = storageWriters()
  const out = new Map<string, string[]>()
  for (const layer of ENTRY_LAYERS)
    for (const file of tsFiles(path.join(SRC, layer))) {
      const names = importedValues(file)
        .filter(([module, name]) => writers.get(module)?.has(name))
        .map(([, name]) => name)
      const text = fs.readFileSync(file, 'utf8')
      if (BUILDER_TEXT.test(text)) names.push(text.match(BUILDER_TEXT)![0])
      if (names.length > 0) out.set(path.relative(SRC, file), [...new Set(names)].sort())
    }
  violationsFound = out
  return out
}

describe('the entry layers write through src/cases only', () => {
  it('knows a writer when it sees one, and a query when it sees one', () => {
    const writers = storageWriters()
    const of = (module: string) => writers.get(path.join(STORAGE, module))
    expect(of('audit-repository.ts')).toContain('recordAudit')
    expect(of('transaction.ts')).toContain('inTransaction')
    // Through a statement of its own module (touchStatement).
    expect(of('access-repository.ts')).toContain('touchKeys')
    expect(of('audit-repository.ts')).not.toContain('listAudit')
    expect(of('account-repository.ts')).not.toContain('findAccountByEmail')
  })

  it('follows a writer through another module, and raw SQL', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'write-boundary-'))
    try {
      fs.writeFileSync(
        path.join(root, 'rows.ts'),
        "import { sql } from 'kysely'\n" +
          "export const put = (db) => db.insertInto('t').values({}).execute()\n" +
          'export const wipe = (db) => sql`DELETE FROM t`.execute(db)\n' +
          '// db.insertInto( in a comment writes nothing\n' +
          "export const get = (db) => db.selectFrom('t').selectAll().execute()\n",
      )
      fs.writeFileSync(
        path.join(root, 'use.ts'),
        "import { get, put } from './rows.js'\n" +
          'export async function both(db) { await get(db); return put(db) }\n' +
          'export const only = (db) => get(db)\n',
      )
      const writers = storageWriters(root)
      expect([...writers.get(path.join(root, 'rows.ts'))!].sort()).toEqual(['put', 'wipe'])
      expect([...writers.get(path.join(root, 'use.ts'))!]).toEqual(['both'])
    } finally {
      fs.rmSync(root, { recursive: true, force: true })
    }
  })

  it('finds dynamic imports as well as static ones, and leaves out types', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'write-boundary-'))
    try {
      const file = path.join(root, 'command.ts')
      fs.writeFileSync(
        file,
        [
          "import { a, type B } from './a.js'",
          "import type { C } from './c.js'",
          'export async function run() {',
          "  const { d, e: renamed } = await import('./d.js')",
          "  const f = (await import('./f.js')).f",
          "  const [{ g }, { h }] = await Promise.all([import('./g.js'), import('./h.js')])",
          "  const i = await import('./i.js')",
          '  return [a, d, renamed, f, g, h, i.i]',
          '}',
        ].join('\n'),
      )
      const names = importedValues(file).map(([module, name]) => `${path.basename(module)}#${name}`)
      expect(names.sort()).toEqual(['a.ts#a', 'd.ts#d', 'd.ts#e', 'f.ts#f', 'g.ts#g', 'h.ts#h', 'i.ts#i'])
    } finally {
      fs.rmSync(root, { recursive: true, force: true })
    }
  })

  it('finds no writer imported by http/, dashboard/, cli/ or imports/ but those waiting for their case', () => {
    const unexpected = [...violations()].flatMap(([file, names]) =>
      names.filter((name) => !NOT_YET_THROUGH_CASES[file]?.includes(name)).map((name) => `${file}: ${name}`),
    )
    expect(unexpected).toEqual([])
  })

  it('lists no import as waiting that no longer is one', () => {
    const stale = Object.entries(NOT_YET_THROUGH_CASES).flatMap(([file, names]) =>
      names.filter((name) => !violations().get(file)?.includes(name)).map((name) => `${file}: ${name}`),
    )
    expect(stale).toEqual([])
  })
})
