/**
 * COPY ... FROM STDIN through the pg package, without pg-copy-streams (not a dependency): pg
 * runs any object with submit() as a query and hands it the protocol messages (the same hook
 * pg-copy-streams uses). Rows are sent as COPY text format, in chunks, waiting for the socket
 * to drain, so millions of rows load at COPY speed in bounded memory.
 */
import { once } from 'node:events'

/** COPY text format: tab-separated, \N for null, backslash escapes for the separators. */
function field(value) {
  if (value === null || value === undefined) return '\\N'
  if (typeof value !== 'string') return String(value)
  return /[\\\t\n\r]/.test(value)
    ? value.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n').replace(/\r/g, '\\r')
    : value
}

const ROWS_PER_CHUNK = 2_000

class CopyIn {
  constructor(text, rows) {
    this.text = text
    this.rows = rows
    this.count = 0
    this.done = new Promise((resolve, reject) => {
      this.resolve = resolve
      this.reject = reject
    })
    this.error = undefined
  }

  submit(connection) {
    connection.query(this.text)
  }

  handleCopyInResponse(connection) {
    this.#pump(connection).catch((error) => {
      this.error = error
      connection.sendCopyFail(String(error.message))
    })
  }

  async #pump(connection) {
    let lines = []
    for (const row of this.rows) {
      lines.push(row.map(field).join('\t'))
      this.count++
      if (lines.length === ROWS_PER_CHUNK) {
        connection.sendCopyFromChunk(Buffer.from(`${lines.join('\n')}\n`))
        lines = []
        if (connection.stream.writableNeedDrain) await once(connection.stream, 'drain')
      }
    }
    if (lines.length > 0) connection.sendCopyFromChunk(Buffer.from(`${lines.join('\n')}\n`))
    connection.endCopyFrom()
  }

  handleCommandComplete() {}

  handleError(error) {
    this.error ??= error
  }

  handleReadyForQuery() {
    if (this.error === undefined) this.resolve(this.count)
    else this.reject(this.error)
  }

  // Messages a COPY FROM never gets; present because pg calls them on any active query.
  handleRowDescription() {}
  handleDataRow() {}
  handlePortalSuspended() {}
  handleEmptyQuery() {}
  handleCopyData() {}
}

/** Streams `rows` (an iterable of value arrays) into `table (columns)`; resolves to the row count. */
export function copyRows(client, table, columns, rows) {
  const copy = new CopyIn(`copy ${table} (${columns.map((c) => `"${c}"`).join(',')}) from stdin`, rows)
  client.query(copy)
  return copy.done
}
