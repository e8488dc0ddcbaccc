import { type Static, Type } from 'typebox'
import { TierIdSchema, tierId } from './common.js'
import { LESSON_ID_PATTERN, SLUG_PATTERN } from '../../domain/slug.js'

export const TierSchema = Type.Object(
  {
    id: TierIdSchema,
    label: Type.String({ description: 'Display name of the tier.', examples: ['Explorer'] }),
    ageRange: Type.String({
      pattern: '^[0-9]+-[0-9]+$',
      description: 'Age range written `<min>-<max>`.',
      examples: ['5-7'],
    }),
    lessonCount: Type.Integer({ minimum: 0, description: 'Number of lessons in the tier.' }),
  },
  { $id: 'Tier', title: 'Tier', additionalProperties: false },
)

export const TiersResponseSchema = Type.Object(
  { tiers: Type.Array(Type.Ref('Tier')) },
  { $id: 'TierList', title: 'TierList', additionalProperties: false },
)

const lessonSummaryFields = {
  slug: Type.String({
    pattern: SLUG_PATTERN,
    description: 'Lesson key, `<tier>/<lessonId>-<title-words>`; contains one `/`.',
    examples: ['explorer/e1-robots-follow-instructions'],
  }),
  lessonId: Type.String({
    pattern: LESSON_ID_PATTERN,
    description: 'Short lesson code within a tier: a letter plus digits.',
    examples: ['e1'],
  }),
  tier: TierIdSchema,
  title: Type.String({ description: 'Lesson title.' }),
  slideCount: Type.Integer({ minimum: 1, description: 'Number of slides.' }),
}

export const LessonSummarySchema = Type.Object(lessonSummaryFields, {
  $id: 'LessonSummary',
  title: 'LessonSummary',
  additionalProperties: false,
})

export const LessonsResponseSchema = Type.Object(
  {
    lessons: Type.Array(Type.Ref('LessonSummary'), {
      description: 'Lessons in catalog order: by tier, then by lesson number.',
    }),
    total: Type.Integer({ minimum: 0, description: 'Number of lessons in `lessons`.' }),
  },
  { $id: 'LessonList', title: 'LessonList', additionalProperties: false },
)

export const LessonSchema = Type.Object(
  {
    ...lessonSummaryFields,
    contentTypes: Type.Array(Type.String(), {
      description: 'Kinds of slide the lesson contains, sorted: `activity`, `bullets`, `code`, `quiz`, `vocabulary`.',
      examples: [['bullets', 'quiz']],
    }),
    standards: Type.Record(Type.String(), Type.Array(Type.String()), {
      description: 'Educational standards: framework to codes, e.g. `{"csta": ["1A-AP-08"]}`. Can be `{}`.',
    }),
  },
  { $id: 'Lesson', title: 'Lesson', additionalProperties: false },
)

export const LessonsQuerySchema = Type.Object(
  { tier: Type.Optional(tierId('Only lessons of this tier.')) },
  { additionalProperties: false },
)

export type TierBody = Static<typeof TierSchema>
export type LessonSummaryBody = Static<typeof LessonSummarySchema>
export type LessonBody = Static<typeof LessonSchema>
