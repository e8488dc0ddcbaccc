/**
 * Writes dist/curriculum-api.postman_collection.json, the Postman collection (v2.1) of the OpenAPI
 * document, which /docs serves (src/http/routes/docs-pages.ts). scripts/build.mjs runs it once tsc
 * has written dist/: the document is the one the built app serves (built on an in-memory database
 * and never listening), converted by openapi-to-postmanv2. That converter is a devDependency, used
 * here only: it brings 66 packages (56 MB) that the server never loads.
 *
 * The converter's output is then made to speak the project's names: the variables `baseUrl`,
 * `apiKey` and `studentId` (BASE_URL, API_KEY and STUDENT_ID everywhere else), bearer
 * authentication from `apiKey`, none on the operations that need no key, and no random ids, so
 * the same sources always build the same file.
 */
import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = path.dirname(path.dirname(fileURLToPath(import.meta.url)))
const DIST = path.join(ROOT, 'dist')
const OUTPUT = path.join(DIST, 'curriculum-api.postman_collection.json')

/** The document the built app serves; its servers[0] is PUBLIC_URL's default, which /docs replaces. */
async function openApiDocument() {
  const { buildApp } = await import(path.join(DIST, 'app.js'))
  const { loadConfig } = await import(path.join(DIST, 'config.js'))
  const { openStorage } = await import(path.join(DIST, 'storage', 'connection.js'))
  const { migrate } = await import(path.join(DIST, 'storage', 'migrate.js'))
  const config = loadConfig({ DATABASE_URL: 'sqlite::memory:', SEED_DEMO: 'false', COMPILE_CACHE_DIR: 'off' })
  const storage = openStorage(config.databaseUrl)
  try {
    await migrate(storage)
    const app = await buildApp({ config, storage, logger: false, pollChanges: false })
    try {
      await app.ready()
      return app.swagger()
    } finally {
      await app.close()
    }
  } finally {
    await storage.close()
  }
}

/** The converter's collection; it is given a copy of the document, since it writes into the schemas it reads. */
function convert(document) {
  const converter = createRequire(import.meta.url)('openapi-to-postmanv2')
  const options = {
    folderStrategy: 'Tags',
    parametersResolution: 'Example',
    // An optional query parameter is listed but not sent (cursor and from together are refused).
    enableOptionalParameters: false,
  }
  return new Promise((resolve, reject) =>
    converter.convert({ type: 'json', data: structuredClone(document) }, options, (error, result) => {
      if (error) reject(error)
      else if (!result.result) reject(new Error(`openapi-to-postmanv2: ${result.reason}`))
      else resolve(result.output[0].data)
    }),
  )
}

const VARIABLES = [
  ['baseUrl', 'BASE_URL: the address of the service, such as http://localhost:3000.'],
  ['apiKey', "API_KEY: one of your keys (cur_test_... or cur_live_...), from the dashboard's Keys page."],
  ['studentId', "STUDENT_ID: one of your students' ids, from the roster or the dashboard's overview."],
]

/** The document's operation for a request of the collection (`api/v1/students/:id/progress`). */
function operationOf(document, request) {
  const template = `/${request.url.path.map((part) => part.replace(/^:(.+)$/, '{$1}')).join('/')}`
  return document.paths?.[template]?.[request.method.toLowerCase()]
}

/** The converter's collection with the project's variable names, its auth, and no random ids. */
function finish(collection, document) {
  const baseUrl = collection.variable?.find((v) => v.key === 'baseUrl')?.value ?? document.servers?.[0]?.url ?? ''
  delete collection.info._postman_id
  collection.variable = VARIABLES.map(([key, description]) => ({
    key,
    value: key === 'baseUrl' ? baseUrl : '',
    type: 'string',
    description,
  }))
  collection.auth = { type: 'bearer', bearer: [{ key: 'token', value: '{{apiKey}}', type: 'string' }] }
  const visit = (item) => {
    delete item.id
    for (const child of item.item ?? []) visit(child)
    for (const response of item.response ?? []) delete response.id
    const request = item.request
    if (request === undefined) return
    const operation = operationOf(document, request)
    // The converter leaves auth null (Postman: inherit the collection's) on every operation without
    // its own security, those that need no key included.
    if (operation?.security?.length === 0) request.auth = { type: 'noauth' }
    else if (request.auth === null) delete request.auth
    const parameters = operation?.parameters ?? []
    for (const variable of request.url?.variable ?? []) {
      const example = parameters.find((p) => p.in === 'path' && p.name === variable.key)?.example
      variable.value = variable.key === 'id' ? '{{studentId}}' : (example ?? variable.value)
    }
    // The body the reference's examples send (the converter fills a body in from the schema's types).
    const example = operation?.requestBody?.content?.['application/json']?.example
    if (request.body?.mode === 'raw' && example !== undefined) request.body.raw = JSON.stringify(example, null, 2)
    // Optional query parameters are listed unchecked, with a value worth checking (never a cursor of another's).
    for (const query of request.url?.query ?? []) {
      const schema = parameters.find((p) => p.in === 'query' && p.name === query.key)?.schema
      query.value = String(schema?.enum?.[0] ?? schema?.default ?? '')
    }
  }
  for (const item of collection.item) visit(item)
  return JSON.parse(JSON.stringify(collection).replaceAll('{{bearerToken}}', '{{apiKey}}'))
}

const document = await openApiDocument()
const collection = finish(await convert(document), document)
fs.writeFileSync(OUTPUT, `${JSON.stringify(collection, null, 1)}\n`)
