import { type Static, Type } from 'typebox'
import { TierIdSchema, TimestampSchema, UuidSchema } from './common.js'

export const StudentParamsSchema = Type.Object({ id: UuidSchema }, { additionalProperties: false })

export const ProgressEntrySchema = Type.Object(
  {
    lessonSlug: Type.String({ description: 'Slug of the lesson.' }),
    status: Type.Unsafe<'in_progress' | 'completed'>({ type: 'string', enum: ['in_progress', 'completed'] }),
    xp: Type.Integer({
      minimum: 0,
      description:
        'Experience points earned in the lesson. Worked through in the LTI lesson player: 10 per slide moved on ' +
        'from and 10 per quiz answered right at the first try; never decreases.',
    }),
    timeSeconds: Type.Integer({
      minimum: 0,
      description:
        'Time spent in the lesson, in seconds. In the LTI lesson player: the time between pages, at most ' +
        '5 minutes counted per page.',
    }),
    startedAt: TimestampSchema,
    // A type list rather than anyOf: the response serializer picks an anyOf branch by running
    // the validator over each branch, which cost more than the rest of the entry.
    completedAt: Type.Unsafe<string | null>({
      type: ['string', 'null'],
      format: 'date-time',
      description: 'When the lesson was completed (ISO 8601 UTC with milliseconds); null while in progress.',
      examples: ['2026-03-01T14:05:09.123Z', null],
    }),
  },
  { $id: 'ProgressEntry', title: 'ProgressEntry', additionalProperties: false },
)

export const StudentProgressSchema = Type.Object(
  {
    profileId: UuidSchema,
    displayName: Type.String({ description: "The student's first name only." }),
    tier: TierIdSchema,
    progress: Type.Array(Type.Ref('ProgressEntry'), {
      description: 'One entry per lesson the student has started, in catalog order.',
    }),
    summary: Type.Object(
      {
        totalLessons: Type.Integer({ minimum: 0, description: "Number of lessons in the student's current tier." }),
        completedLessons: Type.Integer({ minimum: 0, description: 'Completed lessons of the current tier.' }),
        totalXp: Type.Integer({ minimum: 0, description: 'XP over all progress entries.' }),
        totalTimeSeconds: Type.Integer({ minimum: 0, description: 'Time over all progress entries, in seconds.' }),
      },
      { additionalProperties: false },
    ),
  },
  { $id: 'StudentProgress', title: 'StudentProgress', additionalProperties: false },
)

export const EnrollBodySchema = Type.Object(
  { tier: TierIdSchema },
  { $id: 'EnrollRequest', title: 'EnrollRequest', additionalProperties: false, examples: [{ tier: 'builder' }] },
)

export const EnrollmentSchema = Type.Object(
  {
    profileId: UuidSchema,
    tier: TierIdSchema,
    updatedAt: Type.String({
      format: 'date-time',
      description: 'When the tier was last changed: ISO 8601 UTC with milliseconds.',
      examples: ['2026-03-01T14:05:09.123Z'],
    }),
  },
  { $id: 'Enrollment', title: 'Enrollment', additionalProperties: false },
)

export type StudentProgressBody = Static<typeof StudentProgressSchema>
export type EnrollmentBody = Static<typeof EnrollmentSchema>
