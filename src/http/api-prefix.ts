/**
 * Where the API lives. A module of its own so that the fast path, the documentation pages, the
 * dashboard and the demo banner can build API addresses without importing the plugin
 * (api-v1.ts) and everything it registers.
 */
export const API_PREFIX = '/api/v1'

/** Outside the plugin's key check: the document is how a reader learns to get a key. */
export const OPENAPI_PATH = `${API_PREFIX}/openapi.json`
