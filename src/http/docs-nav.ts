/** The links every page of /docs carries to the others, the OpenAPI document and the Postman collection. */
import { OPENAPI_PATH } from './api-prefix.js'

/** Where /docs serves the Postman collection the build generates from the OpenAPI document. */
export const POSTMAN_COLLECTION_PATH = '/docs/curriculum-api.postman_collection.json'

export const DOCS_NAV = `<nav aria-label="Documentation" class="docs-nav"><a href="/docs">API reference</a>
· <a href="/docs/errors">Errors</a> · <a href="/docs/webhooks">Webhooks</a> · <a href="/docs/versioning">Versioning</a>
· <a href="/docs/changelog">Changelog</a> · <a href="${OPENAPI_PATH}">OpenAPI document</a>
· <a href="${POSTMAN_COLLECTION_PATH}">Postman collection</a></nav>`

/** What /docs says of the collection, and of clients that read the OpenAPI document itself. */
export const POSTMAN_NOTE = `In Postman, import the <a href="${POSTMAN_COLLECTION_PATH}">Postman collection</a>
(generated from the OpenAPI document; set its <code>apiKey</code> and <code>studentId</code> variables).
Insomnia, Bruno and other clients import the <a href="${OPENAPI_PATH}">OpenAPI document</a> itself.`
