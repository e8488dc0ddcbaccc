/**
 * Renders the API reference as one static HTML page from the OpenAPI document, so the page
 * can never disagree with the schemas. No script, no CDN: it works offline and under a strict
 * Content-Security-Policy.
 */
import { PROBLEM_CATALOG, PROBLEM_CODES } from '../errors.js'
import { OPENAPI_PATH } from './api-prefix.js'
import { escapeHtml } from '../domain/html-escape.js'
import { codeExamples, EXAMPLE_LANGUAGES, type ExampleValues, exampleRequest } from './code-examples.js'
import { deprecatedMark } from './deprecation.js'
import { POSTMAN_NOTE } from './docs-nav.js'

// biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document is read as loose JSON, field by field
type Json = Record<string, any>

const METHOD_ORDER = ['get', 'post', 'put', 'patch', 'delete']

/** The small Markdown subset the descriptions use: `code`, **bold**, [links](/x), paragraphs. */
export function inlineMarkdown(text: string): string {
  return escapeHtml(text)
    .replace(/`([^`]+)`/g, '<code>$1</code>')
    .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>')
    .replace(/\[([^\]]+)\]\((\/[^)\s]*)\)/g, '<a href="$2">$1</a>')
}

function paragraphs(text: string | undefined): string {
  if (text === undefined) return ''
  return text
    .split(/\n\s*\n/)
    .map((p) => `<p>${inlineMarkdown(p.replace(/\n/g, ' '))}</p>`)
    .join('\n')
}

function resolve(doc: Json, schema: Json | undefined): Json {
  if (schema?.$ref === undefined) return schema ?? {}
  const name = String(schema.$ref).replace('#/components/schemas/', '')
  return doc.components?.schemas?.[name] ?? {}
}

/** A table row; the cells are markup already. */
function row(cells: readonly string[], attributes = ''): string {
  return `<tr${attributes}>${cells.map((cell) => `<td>${cell}</td>`).join('')}</tr>`
}

/** A table; the rows are markup already. */
function table(headings: readonly string[], rows: string): string {
  const head = headings.map((heading) => `<th>${heading}</th>`).join('')
  return `<table><thead><tr>${head}</tr></thead><tbody>${rows}</tbody></table>`
}

/** A name in code type, marked when it may be left out. */
function nameCell(name: string, required: boolean): string {
  return `<code>${escapeHtml(name)}</code>${required ? '' : ' <small>optional</small>'}`
}

function typeLabel(doc: Json, schema: Json | undefined): string {
  if (schema === undefined) return ''
  if (schema.$ref !== undefined) {
    const name = String(schema.$ref).replace('#/components/schemas/', '')
    return `<a href="#schema-${escapeHtml(name)}">${escapeHtml(name)}</a>`
  }
  if (schema.enum !== undefined) {
    const values = schema.enum.map((v: unknown) => `<code>${escapeHtml(v)}</code>`).join(' | ')
    return `${escapeHtml(schema.type ?? '')} (${values})`
  }
  if (schema.anyOf !== undefined) return schema.anyOf.map((s: Json) => typeLabel(doc, s)).join(' or ')
  if (schema.type === 'array') return `array of ${typeLabel(doc, schema.items)}`
  if (schema.type === 'object' && schema.patternProperties !== undefined) {
    const value = Object.values(schema.patternProperties)[0] as Json
    return `object (string to ${typeLabel(doc, value)})`
  }
  const type = Array.isArray(schema.type) ? schema.type.join(' or ') : (schema.type ?? 'any')
  return escapeHtml(schema.format !== undefined ? `${type} (${schema.format})` : type)
}

function fieldTable(doc: Json, schema: Json): string {
  const resolved = resolve(doc, schema)
  const properties = resolved.properties as Json | undefined
  if (properties === undefined) return `<p>${typeLabel(doc, schema)}</p>`
  const required = new Set<string>(resolved.required ?? [])
  const rows = Object.entries(properties)
    .map(([name, prop]) =>
      row([
        nameCell(name, required.has(name)),
        typeLabel(doc, prop as Json),
        inlineMarkdown((prop as Json).description ?? ''),
      ]),
    )
    .join('\n')
  return table(['Field', 'Type', 'Description'], rows)
}

/** The operation's examples, one `<details>` per language (curl open): the page runs no script, so no tabs. */
function examples(doc: Json, method: string, path: string, operation: Json, values: ExampleValues): string {
  const code = codeExamples(exampleRequest(doc, method, path, operation), values)
  return EXAMPLE_LANGUAGES.map(
    ({ id, label }) =>
      `<details class="example"${id === 'curl' ? ' open' : ''}><summary>${escapeHtml(label)}</summary>` +
      `<pre data-example="${id}"><code>${escapeHtml(code[id])}</code></pre></details>`,
  ).join('\n')
}

function operationSection(doc: Json, method: string, path: string, operation: Json, values: ExampleValues): string {
  const id = escapeHtml(operation.operationId ?? `${method}-${path}`)
  const params = (operation.parameters ?? []) as Json[]
  const paramRows = params
    .map((p) =>
      row([
        nameCell(p.name, Boolean(p.required)),
        escapeHtml(p.in),
        typeLabel(doc, p.schema),
        inlineMarkdown(p.description ?? p.schema?.description ?? ''),
      ]),
    )
    .join('\n')
  const body = operation.requestBody?.content?.['application/json']?.schema as Json | undefined
  const responses = Object.entries(operation.responses ?? {})
    .map(([status, response]) => {
      const r = response as Json
      const schema = (Object.values(r.content ?? {})[0] as Json | undefined)?.schema as Json | undefined
      return row([
        `<code>${escapeHtml(status)}</code>`,
        inlineMarkdown(r.description ?? ''),
        schema ? typeLabel(doc, schema) : 'no body',
      ])
    })
    .join('\n')
  return `<section class="operation" id="${id}" aria-labelledby="${id}-title">
<h3 id="${id}-title"><span class="method ${method}">${method.toUpperCase()}</span> <code>${escapeHtml(path)}</code>\
${deprecatedMark(operation)}</h3>
<p class="summary">${inlineMarkdown(operation.summary ?? '')}</p>
${paragraphs(operation.description)}
${paramRows ? `<h4>Parameters</h4>${table(['Name', 'In', 'Type', 'Description'], paramRows)}` : ''}
${body ? `<h4>Request body (<code>application/json</code>)</h4>${fieldTable(doc, body)}` : ''}
<h4>Responses</h4>
${table(['Status', 'Meaning', 'Body'], responses)}
<h4>Examples</h4>
${examples(doc, method, path, operation, values)}
</section>`
}

export function errorCatalogueTable(): string {
  const rows = PROBLEM_CODES.map((code) => {
    const entry = PROBLEM_CATALOG[code]
    const cells = [
      `<code>${code}</code>`,
      String(entry.status),
      escapeHtml(entry.title),
      inlineMarkdown(entry.description),
    ]
    return row(cells, ` id="${code}"`)
  }).join('\n')
  return table(['code', 'Status', 'Title', 'When'], rows)
}

export function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="/docs/style.css">
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`
}

interface Operation {
  tag: string
  method: string
  path: string
  operation: Json
}

function operationsOf(doc: Json): Operation[] {
  const operations: Operation[] = []
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of METHOD_ORDER) {
      const operation = (item as Json)[method] as Json | undefined
      if (operation !== undefined) operations.push({ tag: operation.tags?.[0] ?? 'Other', method, path, operation })
    }
  }
  return operations
}

/**
 * The endpoint sections of the reference. The examples read `BASE_URL`, `API_KEY` and `STUDENT_ID`
 * from the environment, as the reference page tells the reader to set them, unless `values` fills
 * them in (a signed-in partner's own address, key and student), so they run as pasted.
 */
export function referenceSections(doc: Json, values: ExampleValues = {}): string {
  const operations = operationsOf(doc)
  return ((doc.tags ?? []) as Json[])
    .map((tag) => {
      const name = escapeHtml(tag.name)
      const sections = operations
        .filter((o) => o.tag === tag.name)
        .map((o) => operationSection(doc, o.method, o.path, o.operation, values))
        .join('\n')
      const heading = `<h2 id="tag-${name}">${name}</h2>`
      return `<section aria-labelledby="tag-${name}">${heading}${paragraphs(tag.description)}${sections}</section>`
    })
    .join('\n')
}

/** One section per schema, with the `schema-<name>` ids that the endpoint sections link to. */
export function schemaSections(doc: Json): string {
  return Object.entries(doc.components?.schemas ?? {})
    .map(([name, schema]) => {
      const description = paragraphs((schema as Json).description)
      const fields = fieldTable(doc, schema as Json)
      return `<section id="schema-${escapeHtml(name)}"><h3>${escapeHtml(name)}</h3>${description}${fields}</section>`
    })
    .join('\n')
}

/** How to run the page's examples: the three variables they read, where a partner gets them, how to run each kind. */
function tryingTheExamples(baseUrl: string): string {
  return `<section aria-labelledby="examples"><h2 id="examples">Running the examples</h2>
<p>Each endpoint below has examples in curl, JavaScript (<code>fetch</code>, Node.js 22 or later), Python with
<code>requests</code>, and Python with its standard library alone (<code>urllib.request</code>), generated from the
OpenAPI document as the rest of this page is. They read the service's address from <code>BASE_URL</code>, your key
from <code>API_KEY</code> and a student's id from <code>STUDENT_ID</code>; set the three in your shell, then paste
an example as it is:</p>
<pre><code>export BASE_URL=${escapeHtml(baseUrl)}
export API_KEY=cur_test_...    # your key
export STUDENT_ID=...          # one of your students' ids</code></pre>
<p>A curl example goes into that shell. Save a JavaScript example as <code>example.mjs</code> (a module: it awaits at
its top level) and run <code>node example.mjs</code>; save a Python example as <code>example.py</code> and run
<code>python3 example.py</code> (the first kind needs <code>pip install requests</code>). Each prints the status and
the answer.</p>
<p>Your first test key (<code>cur_test_...</code>) is on the <a href="/dashboard">dashboard</a>'s welcome page
after your first sign-in, with these examples filled in; your overview there lists your sandbox students' ids.
A live key (<code>cur_live_...</code>) works the same way on your own students. On a server's first start, its demo
banner prints this <code>export</code> line filled in with a demo key and student.</p></section>`
}

/** The whole reference page, for any reader: the examples read environment variables. */
export function renderReference(doc: Json): string {
  const operations = operationsOf(doc)
  const nav = ((doc.tags ?? []) as Json[])
    .map(
      (tag) =>
        `<li>${escapeHtml(tag.name)}<ul>${operations
          .filter((o) => o.tag === tag.name)
          .map((o) => {
            const summary = escapeHtml(o.operation.summary ?? o.path)
            const mark = deprecatedMark(o.operation)
            return `<li><a href="#${escapeHtml(o.operation.operationId)}">${summary}</a>${mark}</li>`
          })
          .join('')}</ul></li>`,
    )
    .join('')
  const schemas = schemaSections(doc)
  return layout(
    `${doc.info?.title ?? 'API'} reference`,
    `<header><h1>${escapeHtml(doc.info?.title)} <small>v${escapeHtml(doc.info?.version)}</small></h1>
<p>Base address: <code>${escapeHtml(doc.servers?.[0]?.url ?? '')}</code>
· <a href="${OPENAPI_PATH}">OpenAPI document</a> · <a href="/docs/errors">Error catalogue</a>
· <a href="/docs/changelog">Changelog</a> · <a href="/docs/versioning">Versioning</a></p>
<p>${POSTMAN_NOTE}</p></header>
${paragraphs(doc.info?.description)}
<nav aria-label="Endpoints"><h2>Endpoints</h2><ul><li><a href="#examples">Running the examples</a></li>${nav}</ul></nav>
${tryingTheExamples(doc.servers?.[0]?.url ?? '')}
${referenceSections(doc)}
<section aria-labelledby="errors"><h2 id="errors">Errors</h2>
<p>Every error is <code>application/problem+json</code> (RFC 9457) with <code>type</code>, <code>title</code>,
<code>status</code>, <code>detail</code>, a stable <code>code</code> and the <code>requestId</code>.</p>
${errorCatalogueTable()}</section>
<section aria-labelledby="schemas"><h2 id="schemas">Schemas</h2>${schemas}</section>`,
  )
}

export const REFERENCE_CSS = `
:root { color-scheme: light; --fg: #1b1f24; --muted: #57606a; --line: #d0d7de; --accent: #0a58ca; --code: #f3f4f6; }
* { box-sizing: border-box; }
body {
  margin: 0; font: 16px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg);
  background: #fff;
}
main { max-width: 960px; margin: 0 auto; padding: 1rem 1.25rem 4rem; }
a { color: var(--accent); }
a:focus-visible, button:focus-visible { outline: 3px solid #1f6feb; outline-offset: 2px; }
h1 small { color: var(--muted); font-weight: normal; font-size: .6em; }
h2 { border-bottom: 1px solid var(--line); padding-bottom: .3rem; margin-top: 2.5rem; }
code, pre {
  font: 14px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: var(--code);
  border-radius: 4px;
}
code { padding: .1em .3em; }
pre { padding: .75rem; overflow-x: auto; }
pre code { padding: 0; }
table { border-collapse: collapse; width: 100%; margin: .5rem 0 1rem; display: block; overflow-x: auto; }
th, td { border: 1px solid var(--line); padding: .35rem .5rem; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
small { color: var(--muted); }
.operation { border: 1px solid var(--line); border-radius: 8px; padding: 0 1rem 1rem; margin: 1.25rem 0; }
.method {
  display: inline-block; min-width: 3.5rem; text-align: center; border-radius: 4px; color: #fff; font-size: .8em;
  padding: .1em .4em;
}
.method.get { background: #0b6b3a; } .method.post { background: #0a4fa8; }
.deprecated { color: #9a3412; font-size: .8em; }
nav ul { padding-left: 1.2rem; }
details.example { margin: .4rem 0; }
details.example > summary { cursor: pointer; font-weight: 600; }
`
