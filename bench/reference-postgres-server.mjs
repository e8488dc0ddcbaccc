/**
 * The reference for the student endpoints on PostgreSQL: a bare node:http server with
 * node-postgres, the service's own SQL (captured for PostgreSQL by bench/lib/service-sql.mjs)
 * sent the way the service sends it, and nothing else. Beside the service's PostgreSQL rows,
 * the gap is the service's own work (Redis, which the service needs with two workers, included).
 *
 * As the service does with DATABASE_URL on PostgreSQL and WORKERS=2:
 * - REFERENCE_WORKERS processes under node:cluster (default 2), each with a pool of 10
 *   connections (DB_POOL_SIZE's default) and its own key Map (the key by hash once per key);
 * - a progress read: the student, the progress rows, then the disclosure insert on its own
 *   (PostgreSQL commits concurrent statements in parallel and groups their WAL flushes itself,
 *   so the service writes it directly there); answered after it;
 * - an enroll: BEGIN, the statement that locks the student's row (with the link check) and
 *   changes its tier if it differs, disclosure, the change-log entry of a changed tier, COMMIT on
 *   one pooled connection; answered after the COMMIT.
 * Named statements, as the service sends its prepared queries (storage/postgres/named-statements.ts). Same JSON bodies as the service. Leaves out what
 * reference-sqlite-server.mjs leaves out, and Redis (rate limits).
 *
 * Environment: PORT, REFERENCE_POSTGRES_URL, REFERENCE_SCHEMA, REFERENCE_SQL,
 * REFERENCE_WORKERS.
 */
import cluster from 'node:cluster'
import fs from 'node:fs'
import http from 'node:http'
import pg from 'pg'
import {
  bearer,
  catalogIndex,
  keyEntry,
  keyHash,
  notFound,
  problem,
  progressBody,
  readBody,
  route,
  send,
  statementValues,
  tierOf,
  unavailable,
} from './lib/reference-responses.mjs'

const POOL_SIZE = 10

if (cluster.isPrimary) {
  const workers = Number(process.env.REFERENCE_WORKERS ?? 2)
  for (let i = 0; i < workers; i++) cluster.fork()
  const stop = () => {
    for (const worker of Object.values(cluster.workers ?? {})) worker?.kill('SIGTERM')
  }
  cluster.on('exit', () => {
    if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0)
  })
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)
} else {
  await worker()
}

async function worker() {
  const statements = JSON.parse(fs.readFileSync(process.env.REFERENCE_SQL, 'utf8'))
  const pool = new pg.Pool({
    connectionString: process.env.REFERENCE_POSTGRES_URL,
    max: POOL_SIZE,
    options: `-c search_path=${process.env.REFERENCE_SCHEMA}`,
  })
  pool.on('error', () => {})
  /** Runs a captured statement on `on` (the pool or a checked-out client) with named values. */
  const run = (on, name, values, rowMode) => {
    const { sql, params } = statements[name]
    // Named, as the service sends its prepared queries: parsed and planned once per connection.
    return on.query({ name: `reference_${name}`, text: sql, values: params.map(parameterOf(values)), rowMode })
  }
  const parameterOf = (values) => (param) => (typeof param === 'string' ? values[param] : param.constant)
  /** The change-log entry of a changed tier, as the service writes it (on PostgreSQL, one statement). */
  async function logChange(client, values) {
    for (const [i, { sql, params }] of statements.changeLog.entries()) {
      const { rows } = await client.query({
        name: `reference_changeLog_${i}`,
        text: sql,
        values: params.map(parameterOf(values)),
      })
      if (rows[0]?.version !== undefined) values.seq = Number(rows[0].version)
    }
  }
  const index = catalogIndex((await pool.query('select slug, tier, position from lessons')).rows)
  const keys = new Map()

  async function principal(request) {
    const token = bearer(request)
    if (token === undefined) return undefined
    let entry = keys.get(token)
    if (entry === undefined) {
      entry = keyEntry((await run(pool, 'keyByHash', { hash: keyHash(token) })).rows[0])
      keys.set(token, entry)
    }
    return entry ?? undefined
  }

  const disclose = (on, values, action, outcome) => run(on, 'disclosure', { ...values, action, outcome })

  async function progress(reply, key, id) {
    const values = statementValues(key, id)
    const student = (await run(pool, 'student', values)).rows[0]
    const rows = student === undefined ? [] : (await run(pool, 'progress', values, 'array')).rows
    await disclose(pool, values, 'progress.read', student === undefined ? 'not_found' : 'disclosed')
    if (student === undefined) notFound(reply, id)
    else send(reply, 200, progressBody(index, id, student, rows))
  }

  async function enroll(reply, key, id, body) {
    const tier = tierOf(body)
    if (tier === undefined)
      return problem(reply, 400, 'validation_failed', 'tier must be explorer, builder or innovator')
    const now = new Date().toISOString()
    const values = { ...statementValues(key, id, now), tier, updatedAt: now }
    const client = await pool.connect()
    let result
    try {
      await client.query('begin')
      // The tier and time the row had when locked, and whether it was changed.
      const found = (await run(client, 'changeTier', values)).rows[0]
      if (found === undefined) {
        await disclose(client, values, 'enroll', 'not_found')
      } else {
        await disclose(client, values, 'enroll', found.changed ? 'updated' : 'unchanged')
        if (found.changed) await logChange(client, values)
        result = { profileId: id, tier, updatedAt: found.changed ? now : found.tier_updated_at }
      }
      await client.query('commit')
    } catch (error) {
      await client.query('rollback').catch(() => {})
      throw error
    } finally {
      client.release()
    }
    if (result === undefined) notFound(reply, id)
    else send(reply, 200, JSON.stringify(result))
  }

  async function handle(request, reply) {
    const target = route(request)
    if (target.kind === 'ready') return send(reply, 200, '{"status":"ready"}')
    const key = await principal(request)
    if (key === undefined) return problem(reply, 401, 'invalid_api_key', 'The API key is not valid.')
    if (target.kind === 'tiers') return send(reply, 200, '{}')
    if (target.kind === 'progress') return progress(reply, key, target.id)
    if (target.kind === 'enroll') {
      const body = await new Promise((resolve) => readBody(request, resolve))
      return enroll(reply, key, target.id, body)
    }
    problem(reply, 404, 'not_found', 'No such route.')
  }

  const server = http.createServer((request, reply) => {
    handle(request, reply).catch(() => {
      if (!reply.headersSent) unavailable(reply)
    })
  })
  server.keepAliveTimeout = 65_000
  server.listen(Number(process.env.PORT), '127.0.0.1')
  const stop = async () => {
    server.close()
    server.closeAllConnections()
    await pool.end().catch(() => {})
    process.exit(0)
  }
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)
}
