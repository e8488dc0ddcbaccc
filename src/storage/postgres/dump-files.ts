/**
 * What the operator's commands do with a pg_dump archive (check it against the migrations, name
 * the signing keys restoring it would lose), loaded only by them: the server never needs it.
 */
export { DumpArchiveError } from './dump-archive.js'
export { describeDumpDifference } from './dump-differences.js'
export { inspectPostgresDump } from './dump-inspection.js'
export { signingKeysLost } from './dump-signing-keys.js'
