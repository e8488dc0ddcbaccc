/**
 * What the operator's commands do to a SQLite database as a file (back it up, verify a backup,
 * restore one), loaded only by them: the server never needs it.
 */
export { DatabaseFileError, type DatabaseFileReport, inspectDatabaseFile } from './database-file.js'
export { backupDatabaseFile, DestinationExistsError } from './online-backup.js'
export type { CarriedHistory, UndoneAction } from './restore-history.js'
export { DatabaseInUseError, type RestoreReport, restoreDatabaseFile } from './restore.js'
export { describeDifference, type SchemaDifference, schemaRefusal } from './schema-differences.js'
