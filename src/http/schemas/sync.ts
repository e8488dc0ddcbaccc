/**
 * Roster and sync: the organisation's students (GET /api/v1/students) and the change feed of
 * their tiers and progress, with the notices of students who left (GET /api/v1/progress/changes).
 */
import { type Static, Type } from 'typebox'
import {
  STUDENT_CHANGE_TYPES,
  STUDENT_NOTICE_TYPES,
  type StudentChangeType,
  type StudentNoticeType,
} from '../../domain/student-change.js'
import { TierIdSchema, TimestampSchema, tierId, UuidSchema } from './common.js'

export const PAGE_LIMIT = { default: 100, maximum: 500 } as const

const limit = (what: string) =>
  Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: PAGE_LIMIT.maximum,
      default: PAGE_LIMIT.default,
      description:
        `How many ${what} one page holds at most: 1 to ${PAGE_LIMIT.maximum}, ` +
        `${PAGE_LIMIT.default} when left out.`,
      examples: [500],
    }),
  )

/** What cursors look like: 99 characters, nothing readable in them. */
const ROSTER_CURSOR_EXAMPLE =
  'ARFZcrziHDNSkVJ4au-iAgS1i4MaEO-lRXMQ6NxRklk2Y_PKUWgKaDMoxcvYURSzMyYAgnPhk-sNsR5PNam3qKtgnMdlDyKsmX4'
const FEED_CURSOR_EXAMPLE =
  'AUdx_ehSz5ULMMgzg4Ydjzmug-qa8OxlieDzrSGAOjpZTN8U_z3yp1oqmvhduE8hKq_RgHpDNhvzV5sb3ntUmDrn9tOdMHJqhaA'

const cursor = (description: string, example: string) =>
  Type.Optional(Type.String({ minLength: 1, maxLength: 200, description, examples: [example] }))

export const RosterQuerySchema = Type.Object(
  {
    limit: limit('students'),
    cursor: cursor(
      'Where to continue: the `next` of the previous page, unchanged. Leave it out for the first page. Cursors do ' +
        "not expire, and work only with your organisation's keys.",
      ROSTER_CURSOR_EXAMPLE,
    ),
    tier: Type.Optional(tierId('Only students in this tier.')),
  },
  { additionalProperties: false },
)

export const RosterStudentSchema = Type.Object(
  {
    profileId: UuidSchema,
    displayName: Type.String({ description: "The student's first name only.", examples: ['Maya'] }),
    tier: TierIdSchema,
    updatedAt: Type.String({
      format: 'date-time',
      description:
        "When the student's tier or progress last changed (ISO 8601 UTC with milliseconds): " +
        'compare it with your copy to see whose progress to read again.',
      examples: ['2026-03-01T14:05:09.123Z'],
    }),
  },
  { $id: 'RosterStudent', title: 'RosterStudent', additionalProperties: false },
)

export const RosterSchema = Type.Object(
  {
    students: Type.Array(Type.Ref('RosterStudent'), {
      description: 'Students linked to your organisation, ordered by `profileId`.',
    }),
    next: Type.Unsafe<string | null>({
      type: ['string', 'null'],
      description:
        'Cursor of the next page (also in the `Link` header, `rel="next"`), or null on the last page. Students ' +
        'added while you page appear on a later page if their id sorts after the cursor; none is ever listed twice.',
      examples: [ROSTER_CURSOR_EXAMPLE, null],
    }),
  },
  {
    $id: 'Roster',
    title: 'Roster',
    additionalProperties: false,
    examples: [
      {
        students: [
          {
            profileId: '0b6d9a3e-3f1c-4d57-9a0e-2a7c5c1e8f42',
            displayName: 'Maya',
            tier: 'explorer',
            updatedAt: '2026-03-01T14:05:09.123Z',
          },
        ],
        next: null,
      },
    ],
  },
)

export const ChangesQuerySchema = Type.Object(
  {
    cursor: cursor(
      'Where to continue: the `next` of the previous response, unchanged. Store it with your copy: it works on ' +
        "every instance and after restarts, with your organisation's keys only, until the changes after it pass " +
        "the feed's retention (then 410 `cursor_expired`: resync).",
      FEED_CURSOR_EXAMPLE,
    ),
    from: Type.Optional(
      Type.Unsafe<'now' | 'beginning'>({
        type: 'string',
        enum: ['now', 'beginning'],
        description:
          'Without a cursor: `now` (the default) answers no changes and a cursor to follow from this moment; ' +
          '`beginning` starts from the oldest change the feed still keeps. Not allowed with `cursor`.',
      }),
    ),
    limit: limit('changes'),
  },
  { additionalProperties: false },
)

const sequence = Type.Integer({
  minimum: 1,
  description:
    'Position of the item in the feed: increasing in the order the changes were committed. Use it to ' +
    'recognise a change you have already applied.',
  examples: [1042],
})

export const ProgressChangeSchema = Type.Object(
  {
    sequence,
    type: Type.Unsafe<StudentChangeType>({
      type: 'string',
      enum: [...STUDENT_CHANGE_TYPES],
      description:
        '`tier_changed`: the student was placed in `tier` (by enrolling, by an import, or on being added). ' +
        '`progress_updated`: a progress entry was added or changed; `progress` is the entry as it now is.',
    }),
    profileId: UuidSchema,
    displayName: Type.String({ description: "The student's first name only, as it is now.", examples: ['Maya'] }),
    changedAt: TimestampSchema,
    tier: Type.Optional(tierId('The tier now set; only in `tier_changed`.')),
    progress: Type.Optional(Type.Ref('ProgressEntry', { description: 'The entry now; only in `progress_updated`.' })),
  },
  { $id: 'ProgressChange', title: 'ProgressChange', additionalProperties: false },
)

/**
 * A student left the reader's organisation: the item carries the id and the time only, since the
 * student's data may be gone (erased) or no longer the organisation's to see (unlinked).
 */
export const StudentNoticeSchema = Type.Object(
  {
    sequence,
    type: Type.Unsafe<StudentNoticeType>({
      type: 'string',
      enum: [...STUDENT_NOTICE_TYPES],
      description:
        '`student_unlinked`: the student is no longer linked to your organisation; `student_deleted`: the ' +
        'student was erased from the service. Either way, delete your copy of the student: no further change ' +
        'of theirs reaches you, and their progress answers 404.',
    }),
    profileId: UuidSchema,
    changedAt: TimestampSchema,
  },
  { $id: 'StudentNotice', title: 'StudentNotice', additionalProperties: false },
)

export const ProgressChangesSchema = Type.Object(
  {
    changes: Type.Array(Type.Union([Type.Ref('ProgressChange'), Type.Ref('StudentNotice')]), {
      description:
        'Changes after the cursor, oldest first: changes of your students (`ProgressChange`) and notices of ' +
        'students who left your organisation (`StudentNotice`), told apart by `type`.',
    }),
    next: Type.String({
      description:
        'Cursor to send next time. Always present, also when `changes` is empty; it moves past every change ' +
        'returned and never past a change not yet committed.',
      examples: [FEED_CURSOR_EXAMPLE],
    }),
    hasMore: Type.Boolean({
      description:
        'True when more changes may be waiting: ask again at once with `next`. False: you are up to date. A ' +
        'response looks at a bounded stretch of the feed, so it can hold fewer than `limit` changes, even none, ' +
        'with `hasMore` true.',
    }),
  },
  {
    $id: 'ProgressChanges',
    title: 'ProgressChanges',
    additionalProperties: false,
    examples: [
      {
        changes: [
          {
            sequence: 1042,
            type: 'progress_updated',
            profileId: '0b6d9a3e-3f1c-4d57-9a0e-2a7c5c1e8f42',
            displayName: 'Maya',
            changedAt: '2026-03-01T14:05:09.123Z',
            progress: {
              lessonSlug: 'explorer/e1-robots-follow-instructions',
              status: 'completed',
              xp: 120,
              timeSeconds: 734,
              startedAt: '2026-03-01T13:52:55.000Z',
              completedAt: '2026-03-01T14:05:09.123Z',
            },
          },
          {
            sequence: 1043,
            type: 'tier_changed',
            profileId: '0b6d9a3e-3f1c-4d57-9a0e-2a7c5c1e8f42',
            displayName: 'Maya',
            changedAt: '2026-03-01T14:06:00.000Z',
            tier: 'builder',
          },
          {
            sequence: 1051,
            type: 'student_unlinked',
            profileId: '5c2e8f1a-7d3b-4e6a-9b1c-3f4d5e6a7b8c',
            changedAt: '2026-03-01T15:00:00.000Z',
          },
        ],
        next: FEED_CURSOR_EXAMPLE,
        hasMore: false,
      },
    ],
  },
)

export type RosterBody = Static<typeof RosterSchema>
export type ProgressChangesBody = Static<typeof ProgressChangesSchema>
