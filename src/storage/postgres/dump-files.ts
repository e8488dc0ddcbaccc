/**
 * What the operator's commands do with a pg_dump archive (check it against the migrations),
 * loaded only by them: the server never needs it.
 */
export { DumpArchiveError } from './dump-archive.js'
export { describeDumpDifference } from './dump-differences.js'
export { inspectPostgresDump } from './dump-inspection.js'
