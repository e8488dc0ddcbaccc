/**
 * An operation's examples in curl, JavaScript (fetch), Python with `requests` and Python with the
 * standard library alone, generated from the OpenAPI document (method, path, parameter and body
 * examples, security), so that no example can drift from the contract. The reference page (/docs)
 * and the dashboard's new-key page show them.
 *
 * @example
 * const request = exampleRequest(doc, 'get', '/api/v1/tiers', doc.paths['/api/v1/tiers'].get)
 * codeExamples(request).curl // curl "$BASE_URL/api/v1/tiers" \ -H "Authorization: Bearer $API_KEY"
 */

// biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document is read as loose JSON, field by field
type Json = Record<string, any>

/** The names every example, the README, docs/ and the demo banner's `export` line share. */
export const EXAMPLE_VARIABLES = { baseUrl: 'BASE_URL', apiKey: 'API_KEY', studentId: 'STUDENT_ID' } as const

type Variable = keyof typeof EXAMPLE_VARIABLES

/**
 * What an example puts where each variable goes: left out, it reads the environment variable;
 * given, the value itself (a signed-in partner's own key and student).
 */
export type ExampleValues = Partial<Record<Variable, string>>

export const EXAMPLE_LANGUAGES = [
  { id: 'curl', label: 'curl' },
  { id: 'javascript', label: 'JavaScript (fetch, Node.js 22 or later)' },
  { id: 'python', label: 'Python (requests)' },
  { id: 'python-urllib', label: 'Python (standard library only: urllib.request)' },
] as const

export type ExampleLanguage = (typeof EXAMPLE_LANGUAGES)[number]['id']

/** A piece of the request's URL after the base: text, or a variable. */
type UrlPart = { text: string } | { variable: Variable }

/** One operation's example request, independent of the language it is written in. */
export interface ExampleRequest {
  method: string
  /** The path with its parameters filled in, then the query string. */
  url: UrlPart[]
  query: [string, string | number | boolean][]
  body: unknown
  authenticated: boolean
  /** Whether a 2xx answer has a JSON body to print. */
  answersJson: boolean
  /** What the example answers when it cannot succeed everywhere, e.g. `HTTP/1.1 404 Not Found ...`. */
  answer: string | undefined
}

function resolveSchema(doc: Json, schema: Json | undefined): Json {
  if (schema?.$ref === undefined) return schema ?? {}
  return doc.components?.schemas?.[String(schema.$ref).replace('#/components/schemas/', '')] ?? {}
}

function exampleOf(parameter: Json): unknown {
  return parameter.example ?? parameter.schema?.example ?? parameter.schema?.examples?.[0]
}

/**
 * A query parameter goes into the example when it is required, or when it is a setting with a
 * default that the example shows changed (a page's `limit`); a cursor (which only an earlier answer
 * gives) or a filter is left out, so that every example runs as it stands.
 */
function shownInQuery(parameter: Json): boolean {
  if (parameter.in !== 'query' || exampleOf(parameter) === undefined) return false
  return parameter.required === true || parameter.schema?.default !== undefined
}

function pathParts(path: string, parameters: Json[]): UrlPart[] {
  const parts: UrlPart[] = []
  let rest = path
  for (let match = /\{([^}]+)\}/.exec(rest); match !== null; match = /\{([^}]+)\}/.exec(rest)) {
    const before = rest.slice(0, match.index)
    parts.push({ text: before })
    // A student's id is the reader's own: the one path parameter that no document example can give.
    if (before.endsWith('/students/')) parts.push({ variable: 'studentId' })
    else {
      const example = exampleOf(parameters.find((p) => p.in === 'path' && p.name === match![1]) ?? {})
      if (example === undefined) throw new Error(`${path}: the path parameter ${match[1]} has no example`)
      parts.push({ text: String(example) })
    }
    rest = rest.slice(match.index + match[0].length)
  }
  parts.push({ text: rest })
  return parts
}

/** The example request of one operation of the document. */
export function exampleRequest(doc: Json, method: string, path: string, operation: Json): ExampleRequest {
  const parameters = (operation.parameters ?? []) as Json[]
  const media = operation.requestBody?.content?.['application/json'] as Json | undefined
  const security = (operation.security ?? doc.security ?? []) as Json[]
  const answers = Object.entries(operation.responses ?? {}) as [string, Json][]
  return {
    method: method.toUpperCase(),
    url: [{ variable: 'baseUrl' }, ...pathParts(path, parameters)],
    query: parameters.filter(shownInQuery).map((p) => [p.name, exampleOf(p) as string | number | boolean]),
    // The generator moves a body schema's `examples` to the media type's `example`.
    body:
      operation.requestBody === undefined
        ? undefined
        : (media?.example ?? resolveSchema(doc, media?.schema).examples?.[0] ?? {}),
    authenticated: security.length > 0,
    answersJson: answers.some(([status, answer]) => status.startsWith('2') && answer.content !== undefined),
    answer: operation['x-example-answer'],
  }
}

/** How one language writes a string, a variable's value, a URL and a comment. */
interface Dialect {
  string(text: string): string
  /** A URL: an interpolated string made of its parts. */
  url(parts: UrlPart[]): string
  comment: string
}

const JS_IDENTIFIER = /^[A-Za-z_$][\w$]*$/

const js: Dialect = {
  string: (text) => `'${text.replace(/[\\']/g, '\\$&').replace(/\n/g, '\\n')}'`,
  url: (parts) =>
    `\`${parts
      .map((part) =>
        'variable' in part ? `\${${EXAMPLE_VARIABLES[part.variable]}}` : part.text.replace(/[`\\]|\$\{/g, '\\$&'),
      )
      .join('')}\``,
  comment: '//',
}

const python: Dialect = {
  string: (text) => JSON.stringify(text),
  url: (parts) =>
    `f"${parts
      .map((part) =>
        'variable' in part
          ? `{${EXAMPLE_VARIABLES[part.variable]}}`
          : JSON.stringify(part.text).slice(1, -1).replace(/[{}]/g, '$&$&'),
      )
      .join('')}"`,
  comment: '#',
}

/** A JSON value as a JavaScript or Python literal. */
function literal(value: unknown, language: 'js' | 'python'): string {
  if (value === null) return language === 'js' ? 'null' : 'None'
  if (typeof value === 'boolean') return language === 'js' ? String(value) : value ? 'True' : 'False'
  if (typeof value === 'number') return String(value)
  if (typeof value === 'string') return (language === 'js' ? js : python).string(value)
  if (Array.isArray(value)) return `[${value.map((item) => literal(item, language)).join(', ')}]`
  const entries = Object.entries(value as object)
  if (entries.length === 0) return '{}'
  const fields = entries.map(([key, item]) => {
    const name = language === 'js' ? (JS_IDENTIFIER.test(key) ? key : js.string(key)) : python.string(key)
    return `${name}: ${literal(item, language)}`
  })
  return language === 'js' ? `{ ${fields.join(', ')} }` : `{${fields.join(', ')}}`
}

/** The variables an example uses, in the order of EXAMPLE_VARIABLES. */
function variablesOf(request: ExampleRequest): Variable[] {
  const used = new Set<Variable>(request.url.flatMap((part) => ('variable' in part ? [part.variable] : [])))
  if (request.authenticated) used.add('apiKey')
  return (Object.keys(EXAMPLE_VARIABLES) as Variable[]).filter((variable) => used.has(variable))
}

function queryString(request: ExampleRequest): string {
  return request.query.length === 0
    ? ''
    : `?${new URLSearchParams(request.query.map(([k, v]): [string, string] => [k, String(v)]))}`
}

function answerComment(request: ExampleRequest, comment: string): string {
  return request.answer === undefined ? '' : `\n${comment} ${request.answer}`
}

/** In double quotes: a shell expands `$API_KEY` there; a filled-in key or id has nothing it would change. */
function curl(request: ExampleRequest, values: ExampleValues): string {
  const url = request.url
    .map((part) => ('variable' in part ? (values[part.variable] ?? `$${EXAMPLE_VARIABLES[part.variable]}`) : part.text))
    .join('')
  const lines = [`curl${request.method === 'GET' ? '' : ` -X ${request.method}`} "${url}${queryString(request)}"`]
  if (request.authenticated) lines.push(`  -H "Authorization: Bearer ${values.apiKey ?? '$API_KEY'}"`)
  if (request.body !== undefined) {
    const body = JSON.stringify(request.body).replaceAll("'", "'\\''")
    lines.push('  -H "Content-Type: application/json"', `  -d '${body}'`)
  }
  return lines.join(' \\\n') + answerComment(request, '#')
}

function javascript(request: ExampleRequest, values: ExampleValues): string {
  const variables = variablesOf(request)
  const fromEnvironment = variables.filter((variable) => values[variable] === undefined)
  const declarations = [
    ...(fromEnvironment.length === 0
      ? []
      : [`const { ${fromEnvironment.map((variable) => EXAMPLE_VARIABLES[variable]).join(', ')} } = process.env`]),
    ...variables
      .filter((variable) => values[variable] !== undefined)
      .map((variable) => `const ${EXAMPLE_VARIABLES[variable]} = ${js.string(values[variable]!)}`),
  ]
  const url = js.url([...request.url, { text: queryString(request) }])
  const headers = [
    ...(request.authenticated ? [`Authorization: \`Bearer \${API_KEY}\``] : []),
    ...(request.body === undefined ? [] : ["'Content-Type': 'application/json'"]),
  ]
  const options = [
    ...(request.method === 'GET' ? [] : [`  method: '${request.method}',`]),
    ...(headers.length === 0 ? [] : [`  headers: { ${headers.join(', ')} },`]),
    ...(request.body === undefined ? [] : [`  body: JSON.stringify(${literal(request.body, 'js')}),`]),
  ]
  const call = options.length === 0 ? `fetch(${url})` : `fetch(${url}, {\n${options.join('\n')}\n})`
  const print = request.answersJson ? 'response.status, await response.json()' : 'response.status'
  const run = `const response = await ${call}\nconsole.log(${print})`
  return `${declarations.join('\n')}\n\n${run}${answerComment(request, '//')}`
}

function pythonDeclarations(request: ExampleRequest, values: ExampleValues): string {
  return variablesOf(request)
    .map((variable) => {
      const name = EXAMPLE_VARIABLES[variable]
      return `${name} = ${values[variable] === undefined ? `os.environ["${name}"]` : python.string(values[variable]!)}`
    })
    .join('\n')
}

/** Import lines as isort orders them (the standard library first); `os` where a value comes from the environment. */
function pythonImports(request: ExampleRequest, values: ExampleValues, standard: string[], others: string[]): string {
  const readsEnvironment = variablesOf(request).some((variable) => values[variable] === undefined)
  const groups = [[...standard, ...(readsEnvironment ? ['os'] : [])].sort(), others]
  return groups
    .filter((group) => group.length > 0)
    .map((group) => group.map((module) => `import ${module}`).join('\n'))
    .join('\n\n')
}

function pythonHeaders(request: ExampleRequest, withContentType: boolean): string[] {
  return [
    ...(request.authenticated ? ['"Authorization": f"Bearer {API_KEY}"'] : []),
    ...(withContentType && request.body !== undefined ? ['"Content-Type": "application/json"'] : []),
  ]
}

function pythonRequests(request: ExampleRequest, values: ExampleValues): string {
  const headers = pythonHeaders(request, false)
  const query = request.query.map(([name, value]) => `${python.string(name)}: ${literal(value, 'python')}`)
  const args = [
    python.url(request.url),
    ...(query.length === 0 ? [] : [`params={${query.join(', ')}}`]),
    ...(headers.length === 0 ? [] : [`headers={${headers.join(', ')}}`]),
    ...(request.body === undefined ? [] : [`json=${literal(request.body, 'python')}`]),
    'timeout=10',
  ]
  const print = request.answersJson ? 'response.status_code, response.json()' : 'response.status_code'
  return `${pythonImports(request, values, [], ['requests'])}

${pythonDeclarations(request, values)}

response = requests.${request.method.toLowerCase()}(
${args.map((arg) => `    ${arg},`).join('\n')}
)
print(${print})${answerComment(request, '#')}`
}

function pythonUrllib(request: ExampleRequest, values: ExampleValues): string {
  const headers = pythonHeaders(request, true)
  const args = [
    python.url([...request.url, { text: queryString(request) }]),
    ...(request.method === 'GET' ? [] : [`method="${request.method}"`]),
    ...(headers.length === 0 ? [] : [`headers={${headers.join(', ')}}`]),
    ...(request.body === undefined ? [] : [`data=json.dumps(${literal(request.body, 'python')}).encode()`]),
  ]
  const read = (answer: string, status: string) => (request.answersJson ? `${status}, json.load(${answer})` : status)
  const modules = [...(request.answersJson ? ['json'] : []), 'urllib.error', 'urllib.request']
  return `${pythonImports(request, values, modules, [])}

${pythonDeclarations(request, values)}

request = urllib.request.Request(${args.length === 1 ? args[0] : `\n${args.map((arg) => `    ${arg},`).join('\n')}\n`})
try:
    with urllib.request.urlopen(request, timeout=10) as response:
        print(${read('response', 'response.status')})
except urllib.error.HTTPError as error:  # a 4xx or 5xx answer; its body is a problem+json
    print(${read('error', 'error.code')})${answerComment(request, '#')}`
}

/** The request written in every language, each a program that runs as it stands. */
export function codeExamples(request: ExampleRequest, values: ExampleValues = {}): Record<ExampleLanguage, string> {
  return {
    curl: curl(request, values),
    javascript: javascript(request, values),
    python: pythonRequests(request, values),
    'python-urllib': pythonUrllib(request, values),
  }
}
