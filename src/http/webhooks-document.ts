/**
 * The OpenAPI document's `webhooks` section: every event the service sends, with its body (the
 * schemas the outbox builds bodies to: domain/webhook-payloads.ts), the signed headers and what
 * a receiver must answer. The /docs/webhooks chapter is rendered from it.
 */
import { SENT_EVENTS, type SentEvent } from '../domain/webhook-events.js'
import { WEBHOOK_SCHEMA_IDS, WebhookHeadersSchema } from '../domain/webhook-payloads.js'
import { KEPT_RESPONSE_BYTES } from '../webhooks/send-webhook.js'

/** Each event in a line, and when it is sent. */
export const WEBHOOK_EVENT_TEXTS: Record<SentEvent, { summary: string; when: string }> = {
  'student.tier_changed': {
    summary: "A student's tier changed",
    when:
      'A student linked to your organisation was placed in another tier, by an enroll (`POST ' +
      "/api/v1/students/{id}/enroll`, with any linked organisation's key) or by an import. Setting the tier the " +
      'student already has sends nothing.',
  },
  'progress.updated': {
    summary: "A student's progress changed",
    when:
      'An import added or changed progress entries of a student linked to your organisation: one event per ' +
      'student per import, with the entries that changed.',
  },
  'student.unlinked': {
    summary: 'A student was unlinked from your organisation',
    when:
      'A student is no longer linked to your organisation: the operator unlinked them, the last school share ' +
      'that linked them ended, or the disposition period of your ended agreement ran out. Delete your copy of ' +
      'the student. Sent whatever your access now (agreement, suspension), since it asks you to delete.',
  },
  'student.deleted': {
    summary: 'A student was erased',
    when:
      'The operator erased a student who was linked to your organisation. Delete your copy of the student. ' +
      'Sent whatever your access now, since it asks you to delete.',
  },
  'catalog.published': {
    summary: 'A new catalog was published',
    when: 'The operator published a new catalog: read the tiers and lessons again. Carries no student data.',
  },
  'webhook.test': {
    summary: 'A test event',
    when:
      'You pressed "Send test event" on the endpoint\'s page in the dashboard. Sent to that endpoint whatever ' +
      'events it subscribed to; carries no student data.',
  },
}

/** `student.tier_changed` -> `studentTierChanged`. */
function operationId(event: SentEvent): string {
  return event.replace(/[._]([a-z])/g, (_match, letter: string) => letter.toUpperCase())
}

/** The `webhooks` section, with this deployment's deadline for an answer (`timeoutMs`). */
export function webhooksSection(timeoutMs: number): Record<string, object> {
  const seconds = `${timeoutMs / 1000} s`
  const parameters = Object.entries(WebhookHeadersSchema.properties).map(([name, schema]) => {
    const { description, ...rest } = schema as typeof schema & { description: string }
    return { name, in: 'header', required: true, description, schema: rest }
  })
  const responses = {
    '2XX': {
      description:
        `Received: any 2xx answer within ${seconds} ends the delivery. Answer first, then do the work; the ` +
        `answer's body is not read (its first ${KEPT_RESPONSE_BYTES} bytes are kept for your delivery log).`,
    },
    '4XX': {
      description:
        'Refused (say 400 for a signature that does not verify): the attempt failed and is retried on the schedule.',
    },
    default: {
      description:
        `Any other answer (a redirect is not followed), or none within ${seconds}: the attempt failed and is ` +
        'retried on the schedule.',
    },
  }
  return Object.fromEntries(
    SENT_EVENTS.map((event) => [
      event,
      {
        post: {
          operationId: operationId(event),
          summary: WEBHOOK_EVENT_TEXTS[event].summary,
          description: WEBHOOK_EVENT_TEXTS[event].when,
          security: [],
          parameters,
          requestBody: {
            required: true,
            content: { 'application/json': { schema: { $ref: `#/components/schemas/${WEBHOOK_SCHEMA_IDS[event]}` } } },
          },
          responses,
        },
      },
    ]),
  )
}
