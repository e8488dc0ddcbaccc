/**
 * The API's release: the OpenAPI document's `info.version`, the latest version of CHANGELOG.md and
 * package.json's version, which a test keeps equal. Set it when a release is made
 * (docs/versioning.md, "Releases").
 */
export const API_VERSION = '1.5.0'
