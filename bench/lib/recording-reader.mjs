/**
 * A stand-in for the connection the service's fast path reads progress from synchronously:
 * statements are prepared on `database`, and each `get` is recorded in `sent` (`{ sql,
 * parameters }`), as a Kysely log hook records what goes through Kysely. It offers what that
 * read uses: `prepare`, then `raw` and `get`.
 */
export function recordingReader(database, sent) {
  return {
    prepare(sql) {
      const statement = database.prepare(sql)
      const recorded = {
        raw(on) {
          statement.raw(on)
          return recorded
        },
        get(...parameters) {
          sent.push({ sql, parameters })
          return statement.get(...parameters)
        },
      }
      return recorded
    },
  }
}
