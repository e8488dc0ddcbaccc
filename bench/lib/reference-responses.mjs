/**
 * What the reference servers (bench/reference-*-server.mjs) answer, shared by both: the same
 * JSON bodies as the service (progress in catalog order with its summary, the enrollment, a
 * problem document), built with JSON.stringify; routing by plain string tests; keys checked by
 * SHA-256 hash once each and then kept in a Map.
 */
import { hash, randomUUID } from 'node:crypto'

const JSON_TYPE = 'application/json; charset=utf-8'
const PROBLEM_TYPE = 'application/problem+json; charset=utf-8'
const STUDENTS = '/api/v1/students/'
export const TIERS = new Set(['explorer', 'builder', 'innovator'])

export function send(reply, status, body, type = JSON_TYPE) {
  reply.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) })
  reply.end(body)
}

export function problem(reply, status, code, detail) {
  send(
    reply,
    status,
    JSON.stringify({ type: `https://curriculum.example/problems/${code}`, title: code, status, detail }),
    PROBLEM_TYPE,
  )
}

export function notFound(reply, id) {
  problem(reply, 404, 'student_not_found', `No student with id ${id} is linked to your organisation.`)
}

export function unavailable(reply) {
  problem(reply, 503, 'storage_unavailable', 'Try again shortly.')
}

/** What the request asks for: readiness, the tiers (only for the key-cache fill), a student endpoint, or nothing known. */
export function route(request) {
  const url = request.url
  if (url === '/readyz') return { kind: 'ready' }
  if (url === '/api/v1/tiers' && request.method === 'GET') return { kind: 'tiers' }
  if (url.startsWith(STUDENTS)) {
    const slash = url.indexOf('/', STUDENTS.length)
    const id = url.slice(STUDENTS.length, slash).toLowerCase()
    const action = url.slice(slash + 1)
    if (action === 'progress' && request.method === 'GET') return { kind: 'progress', id }
    if (action === 'enroll' && request.method === 'POST') return { kind: 'enroll', id }
  }
  return { kind: 'unknown' }
}

/** The request's bearer token, or undefined. */
export function bearer(request) {
  const header = request.headers.authorization
  return header === undefined || !header.startsWith('Bearer ') ? undefined : header.slice(7)
}

export function keyHash(token) {
  return hash('sha256', token, 'hex')
}

/** A key row (from the service's key-by-hash statement) as the reference keeps it, or null when it is no good. */
export function keyEntry(row) {
  if (row === undefined || row.revokedAt !== null) return null
  return {
    keyId: row.keyId,
    organisationId: row.organisationId,
    sandbox: row.mode === 'test' && row.organisationKind === 'sandbox' ? 1 : 0,
  }
}

/** The requested tier, or undefined when the body has none of the three. */
/** The named values a request's statements take (service-sql.mjs names them), for `key` asking about student `id`. */
export function statementValues(key, id, at = new Date().toISOString()) {
  return {
    studentId: id,
    organisationId: key.organisationId,
    sandbox: key.sandbox,
    keyId: key.keyId,
    requestId: randomUUID(),
    at,
  }
}

export function tierOf(body) {
  try {
    const tier = JSON.parse(body).tier
    return TIERS.has(tier) ? tier : undefined
  } catch {
    return undefined
  }
}

/** Lesson positions and lessons per tier, from `select slug, tier, position from lessons`. */
export function catalogIndex(lessons) {
  const positions = new Map()
  const counts = new Map()
  for (const { slug, tier, position } of lessons) {
    positions.set(slug, Number(position))
    counts.set(tier, (counts.get(tier) ?? 0) + 1)
  }
  return { positions, counts }
}

/** The service's progress body from the student row and the progress rows (as arrays, in the service's column order). */
export function progressBody(index, id, student, rows) {
  const rank = (slug) => index.positions.get(slug) ?? Number.MAX_SAFE_INTEGER
  const entries = new Array(rows.length)
  let completedLessons = 0
  let totalXp = 0
  let totalTimeSeconds = 0
  for (let i = 0; i < rows.length; i++) {
    const [lessonSlug, status, xp, timeSeconds, startedAt, completedAt] = rows[i]
    entries[i] = { lessonSlug, status, xp: Number(xp), timeSeconds: Number(timeSeconds), startedAt, completedAt }
    totalXp += entries[i].xp
    totalTimeSeconds += entries[i].timeSeconds
    if (status === 'completed' && lessonSlug.slice(0, lessonSlug.indexOf('/')) === student.tier) completedLessons++
  }
  entries.sort(
    (a, b) =>
      rank(a.lessonSlug) - rank(b.lessonSlug) ||
      (a.lessonSlug < b.lessonSlug ? -1 : a.lessonSlug > b.lessonSlug ? 1 : 0),
  )
  return JSON.stringify({
    profileId: id,
    displayName: student.firstName,
    tier: student.tier,
    progress: entries,
    summary: { totalLessons: index.counts.get(student.tier) ?? 0, completedLessons, totalXp, totalTimeSeconds },
  })
}

/** Reads a request body as text, then calls `done` with it. */
export function readBody(request, done) {
  let body = ''
  request.setEncoding('utf8')
  request.on('data', (chunk) => (body += chunk))
  request.on('end', () => done(body))
}
