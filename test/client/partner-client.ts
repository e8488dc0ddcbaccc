/**
 * What a partner's own tooling does: a client typed from the served OpenAPI document
 * (openapi-typescript writes ./generated/api.ts at test time), calling every endpoint.
 * This file is type-checked against the generated types, then run against a live server.
 */
import createClient from 'openapi-fetch'
import type { paths } from './generated/api.js'

export interface PartnerRun {
  tierIds: string[]
  lessonTotal: number
  builderTotal: number
  lessonTitle: string
  standards: Record<string, string[]>
  alignment: { framework: string; code: string; caseIdentifier?: string; caseUri?: string }[]
  alignedLessons: string[]
  notModified: boolean
  displayName: string
  completedLessons: number
  enrolledTier: string
  updatedAt: string
  missingLessonCode: string | undefined
  roster: string[]
  rosterPages: number
  changesAfterEnroll: { type: string; profileId: string; tier: string | undefined }[]
  changesFromBeginning: number
  attestationCode: string | undefined
  signingKeyIds: string[]
}

export async function runPartnerClient(
  baseUrl: string,
  catalogKey: string,
  studentKey: string,
  studentId: string,
): Promise<PartnerRun> {
  const catalog = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${catalogKey}` } })
  const students = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${studentKey}` } })

  const tiers = await catalog.GET('/api/v1/tiers')
  if (tiers.data === undefined) throw new Error(`tiers: ${tiers.response.status}`)
  const tierIds: string[] = tiers.data.tiers.map((tier) => tier.id)
  const lessonCount: number = tiers.data.tiers[0]!.lessonCount

  const lessons = await catalog.GET('/api/v1/lessons')
  const builder = await catalog.GET('/api/v1/lessons', { params: { query: { tier: 'builder' } } })
  if (lessons.data === undefined || builder.data === undefined) throw new Error('lessons')

  const slug = lessons.data.lessons[0]!.slug
  const lesson = await catalog.GET('/api/v1/lessons/{slug}', { params: { path: { slug } } })
  if (lesson.data === undefined) throw new Error(`lesson: ${lesson.response.status}`)
  const etag = lesson.response.headers.get('etag') ?? ''
  const again = await catalog.GET('/api/v1/lessons/{slug}', {
    params: { path: { slug }, header: { 'if-none-match': etag } },
  })

  const missing = await catalog.GET('/api/v1/lessons/{slug}', { params: { path: { slug: 'explorer/e404-not-here' } } })
  const code = lesson.data.standardsAlignment[0]?.code ?? 'none'
  const aligned = await catalog.GET('/api/v1/lessons', { params: { query: { standard: code } } })
  if (aligned.data === undefined) throw new Error(`lessons of ${code}: ${aligned.response.status}`)

  // The roster two at a time, following `next` to the end.
  const rosterPage = async (cursor: string | null) => {
    const page = await students.GET('/api/v1/students', {
      params: { query: cursor === null ? { limit: 2 } : { limit: 2, cursor } },
    })
    if (page.data === undefined) throw new Error(`roster: ${page.response.status}`)
    return page.data
  }
  const roster: string[] = []
  let rosterPages = 0
  let cursor: string | null = null
  do {
    const page = await rosterPage(cursor)
    roster.push(...page.students.map((student) => student.profileId))
    rosterPages++
    cursor = page.next
  } while (cursor !== null)

  // The change feed from now, so that the enroll below is the change it shows next.
  const now = await students.GET('/api/v1/progress/changes')
  if (now.data === undefined) throw new Error(`changes: ${now.response.status}`)

  const progress = await students.GET('/api/v1/students/{id}/progress', { params: { path: { id: studentId } } })
  if (progress.data === undefined) throw new Error(`progress: ${progress.response.status}`)
  const enrolled = await students.POST('/api/v1/students/{id}/enroll', {
    params: { path: { id: studentId } },
    body: { tier: 'innovator' },
  })
  if (enrolled.data === undefined) throw new Error(`enroll: ${enrolled.response.status}`)

  const after = await students.GET('/api/v1/progress/changes', { params: { query: { cursor: now.data.next } } })
  const beginning = await students.GET('/api/v1/progress/changes', {
    params: { query: { from: 'beginning', limit: 500 } },
  })
  if (after.data === undefined || beginning.data === undefined) throw new Error('changes')

  // The key's agreement is in force: nothing has ended, so there is nothing to attest.
  const attestation = await students.POST('/api/v1/deletion-attestations', { body: {} })
  const signingKeys = await catalog.GET('/.well-known/curriculum-signing-keys')
  if (signingKeys.data === undefined) throw new Error(`signing keys: ${signingKeys.response.status}`)

  return {
    tierIds,
    lessonTotal: lessons.data.total + 0 * lessonCount,
    builderTotal: builder.data.total,
    lessonTitle: lesson.data.title,
    standards: lesson.data.standards,
    alignment: lesson.data.standardsAlignment,
    alignedLessons: aligned.data.lessons.map((each) => each.slug),
    notModified: again.response.status === 304,
    displayName: progress.data.displayName,
    completedLessons: progress.data.summary.completedLessons,
    enrolledTier: enrolled.data.tier,
    updatedAt: enrolled.data.updatedAt,
    missingLessonCode: missing.error?.code,
    roster,
    rosterPages,
    changesAfterEnroll: after.data.changes.map((change) => ({
      type: change.type,
      profileId: change.profileId,
      // A notice of a student who left carries no tier; `type` tells the items apart.
      tier: 'tier' in change ? change.tier : undefined,
    })),
    // Everything but the enroll: the fixtures' tiers and progress entries of the key's students.
    changesFromBeginning: beginning.data.changes.length - 1,
    attestationCode: attestation.error?.code,
    signingKeyIds: signingKeys.data.keys.map((key) => key.kid),
  }
}
