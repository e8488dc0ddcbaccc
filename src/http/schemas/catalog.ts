import { type Static, Type } from 'typebox'
import { TierIdSchema, tierId } from './common.js'
import { LESSON_ID_PATTERN, SLUG_PATTERN } from '../../domain/slug.js'
import { STANDARD_REFERENCE_MAX_LENGTH } from '../../domain/standard-reference.js'

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
    standardsAlignment: Type.Array(
      Type.Object(
        {
          framework: Type.String({ description: 'The framework, as a key of `standards`.', examples: ['csta'] }),
          code: Type.String({ description: "The framework's code of the standard.", examples: ['1A-AP-08'] }),
          caseIdentifier: Type.Optional(
            Type.String({
              format: 'uuid',
              description:
                "The identifier of the standard's item in the framework's CASE document (1EdTech CASE 1.1 " +
                '`CFItem.identifier`); absent when the catalog has none for this code.',
              examples: ['9f0c6a57-3b1e-4c2d-8e5f-1a2b3c4d5e6f'],
            }),
          ),
          caseUri: Type.Optional(
            Type.String({
              format: 'uri',
              description: "The item's URI (`CFItem.uri`), present with `caseIdentifier`.",
              examples: ['https://case.example.org/uri/9f0c6a57-3b1e-4c2d-8e5f-1a2b3c4d5e6f'],
            }),
          ),
        },
        { additionalProperties: false },
      ),
      {
        description:
          'Every code of `standards`, in its order, with its CASE identifier and URI where the catalog has them. ' +
          'Empty when `standards` is `{}`.',
      },
    ),
  },
  { $id: 'Lesson', title: 'Lesson', additionalProperties: false },
)

export const LessonsQuerySchema = Type.Object(
  {
    tier: Type.Optional(tierId('Only lessons of this tier.')),
    standard: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: STANDARD_REFERENCE_MAX_LENGTH,
        description:
          'Only lessons aligned to this standard: a code of any framework, exactly as `standards` writes it ' +
          "(`1B-AP-08`), or its item's CASE identifier, a UUID in either case. Letters, digits, `.`, `-`, `_` and " +
          '`:`. A standard no lesson has answers an empty list.',
        examples: ['1B-AP-08'],
      }),
    ),
  },
  { additionalProperties: false },
)

export type TierBody = Static<typeof TierSchema>
export type LessonSummaryBody = Static<typeof LessonSummarySchema>
export type LessonBody = Static<typeof LessonSchema>
