/**
 * What a webhook delivery carries, as JSON Schema (TypeBox): each event's body (the Standard
 * Webhooks envelope: type, timestamp, data) and the signed headers. The outbox builds bodies of
 * these types (`webhookBody`) and the OpenAPI document's `webhooks` section declares these very
 * schemas, so what is sent and what is documented cannot differ.
 */
import { type Static, type TSchema, Type } from 'typebox'
import type { ProgressEntry } from './progress.js'
import { TIER_IDS, type TierId } from './tiers.js'
import type { SentEvent } from './webhook-events.js'
import { SIGNATURE_TOLERANCE_SECONDS } from './webhook-signature.js'

const profileId = Type.String({
  format: 'uuid',
  description: "The student's id: `profileId` in the API.",
  examples: ['0b6d9a3e-3f1c-4d57-9a0e-2a7c5c1e8f42'],
})

const timestamp = (description: string) =>
  Type.String({ format: 'date-time', description, examples: ['2026-03-01T14:05:09.123Z'] })

const TierChangedData = Type.Object(
  {
    profileId,
    tier: Type.Unsafe<TierId>({ type: 'string', enum: [...TIER_IDS], description: 'The tier the student is now in.' }),
    updatedAt: timestamp('When the tier was set: ISO 8601 UTC with milliseconds.'),
  },
  { additionalProperties: false },
)

const ProgressUpdatedData = Type.Object(
  {
    profileId,
    progress: Type.Array(Type.Unsafe<ProgressEntry>(Type.Ref('ProgressEntry')), {
      minItems: 1,
      description:
        "The entries this change added or changed, as the student's progress lists them; the others are unchanged.",
    }),
  },
  { additionalProperties: false },
)

/** A notice that a student left: the id only, since the student's data may be gone. */
const StudentLeftData = Type.Object({ profileId }, { additionalProperties: false })

const CatalogPublishedData = Type.Object(
  {
    catalogVersion: Type.Integer({ minimum: 1, description: 'The version of the catalog now served.' }),
    tiers: Type.Integer({ minimum: 0, description: 'Tiers in the published catalog.' }),
    lessons: Type.Integer({ minimum: 0, description: 'Lessons in the published catalog.' }),
  },
  { additionalProperties: false },
)

const TestEventData = Type.Object(
  {
    endpointId: Type.String({ format: 'uuid', description: 'The endpoint the test was sent to.' }),
    message: Type.String({ description: 'A sentence saying where the event came from.' }),
  },
  { additionalProperties: false },
)

/** Each event's `data`. */
const WEBHOOK_DATA = {
  'student.tier_changed': TierChangedData,
  'progress.updated': ProgressUpdatedData,
  'student.unlinked': StudentLeftData,
  'student.deleted': StudentLeftData,
  'catalog.published': CatalogPublishedData,
  'webhook.test': TestEventData,
} as const satisfies Record<SentEvent, TSchema>

export type WebhookData<E extends SentEvent> = Static<(typeof WEBHOOK_DATA)[E]>

/** The name of each event's body schema among the document's components. */
export const WEBHOOK_SCHEMA_IDS: Record<SentEvent, string> = {
  'student.tier_changed': 'StudentTierChangedEvent',
  'progress.updated': 'ProgressUpdatedEvent',
  'student.unlinked': 'StudentUnlinkedEvent',
  'student.deleted': 'StudentDeletedEvent',
  'catalog.published': 'CatalogPublishedEvent',
  'webhook.test': 'WebhookTestEvent',
}

const STUDENT = '0b6d9a3e-3f1c-4d57-9a0e-2a7c5c1e8f42'

/** One body of each event, as a delivery carries it (the document's examples). */
const EXAMPLES: { [E in SentEvent]: WebhookData<E> } = {
  'student.tier_changed': { profileId: STUDENT, tier: 'builder', updatedAt: '2026-03-01T14:05:09.123Z' },
  'progress.updated': {
    profileId: STUDENT,
    progress: [
      {
        lessonSlug: 'explorer/e1-robots-follow-instructions',
        status: 'completed',
        xp: 120,
        timeSeconds: 734,
        startedAt: '2026-03-01T13:52:55.000Z',
        completedAt: '2026-03-01T14:05:09.123Z',
      },
    ],
  },
  'student.unlinked': { profileId: STUDENT },
  'student.deleted': { profileId: STUDENT },
  'catalog.published': { catalogVersion: 4, tiers: 3, lessons: 30 },
  'webhook.test': { endpointId: '7c9e6679-7425-40de-944b-e07fc1f90ae7', message: 'A test event from the dashboard.' },
}

function bodySchema<E extends SentEvent>(type: E) {
  const id = WEBHOOK_SCHEMA_IDS[type]
  const example = { type, timestamp: '2026-03-01T14:05:09.123Z', data: EXAMPLES[type] }
  return Type.Object(
    {
      type: Type.Literal(type, { description: 'The event.' }),
      timestamp: timestamp(
        'When the event happened: ISO 8601 UTC with milliseconds, the same on every attempt ' +
          '(the `webhook-timestamp` header is the time of the attempt).',
      ),
      data: WEBHOOK_DATA[type],
    },
    {
      $id: id,
      title: id,
      additionalProperties: false,
      description: `The body of a \`${type}\` delivery.`,
      examples: [example],
    },
  )
}

/** Each event's body schema, with the `$id` the document names it by (they are added to the app's schemas). */
export const WEBHOOK_BODY_SCHEMAS = {
  'student.tier_changed': bodySchema('student.tier_changed'),
  'progress.updated': bodySchema('progress.updated'),
  'student.unlinked': bodySchema('student.unlinked'),
  'student.deleted': bodySchema('student.deleted'),
  'catalog.published': bodySchema('catalog.published'),
  'webhook.test': bodySchema('webhook.test'),
} as const satisfies Record<SentEvent, TSchema>

/** A delivery's body: what every attempt of it sends, byte for byte. */
export function webhookBody<E extends SentEvent>(type: E, data: WebhookData<E>, at: string): string {
  return JSON.stringify({ type, timestamp: at, data })
}

/** Who sends the deliveries. */
export const WEBHOOK_USER_AGENT = 'Curriculum-API-Webhooks/1'

/** A `v1,` signature: HMAC-SHA256 (32 bytes) in base64. */
const SIGNATURE = 'v1,[A-Za-z0-9+/]{43}='

/** The headers of every delivery besides `content-type: application/json` (Standard Webhooks). */
export const WebhookHeadersSchema = Type.Object({
  'webhook-id': Type.String({
    pattern: '^msg_[A-Za-z0-9_-]{22}$',
    description: "The delivery's id: the same on every attempt and resend of it, so drop one you have already handled.",
    examples: ['msg_2KWPBgLlAfxdpx2AI54pPJ'],
  }),
  'webhook-timestamp': Type.String({
    pattern: '^[0-9]+$',
    description:
      'When this attempt was signed, in seconds since 1970-01-01 UTC. Refuse a delivery whose timestamp is ' +
      `more than ${SIGNATURE_TOLERANCE_SECONDS / 60} minutes from your clock, so a captured delivery cannot be ` +
      'replayed later.',
    examples: ['1772373909'],
  }),
  'webhook-signature': Type.String({
    pattern: `^${SIGNATURE}( ${SIGNATURE})*$`,
    description:
      'One `v1,<base64 HMAC-SHA256>` signature of `<webhook-id>.<webhook-timestamp>.<body>` per signing secret ' +
      'in force, separated by spaces: two for a day after the secret is rolled. Accept the delivery if any matches.',
    examples: ['v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4='],
  }),
  'user-agent': Type.Literal(WEBHOOK_USER_AGENT, { description: 'Who sends the deliveries.' }),
})

export type WebhookHeaders = Static<typeof WebhookHeadersSchema>
