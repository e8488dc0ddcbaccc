/**
 * The OpenAPI 3.1 document is generated from the route schemas (@fastify/swagger); nothing
 * here repeats a route's shape. This module only adds the document-level parts and maps the
 * lesson route's wildcard onto the contract's `{slug}` parameter.
 */
import type { SwaggerOptions } from '@fastify/swagger'
import { Type } from 'typebox'
import type { Config } from '../config.js'
import { SLUG_PATTERN } from '../domain/slug.js'
import { API_PREFIX } from './api-prefix.js'
import { API_VERSION } from './api-version.js'
import { webhooksSection } from './webhooks-document.js'

export const API_DESCRIPTION = `The Curriculum API lists curriculum tiers and lessons, returns a student's progress
and sets a student's tier, lists your organisation's students and gives a feed of every change to their tiers
and progress, to keep a copy in sync.

**Authentication.** Every \`/api/v1\` request carries \`Authorization: Bearer <API key>\`; keys are never
accepted in the URL. You create your keys yourself in the [dashboard](/dashboard). Sign up, and on your first
sign-in you get a sandbox at once: made-up students with progress and a first test key (\`cur_test_...\`),
which reaches the real catalog and the sandbox's students, never a real child's data, and needs no agreement.
For real students, apply for live access in the dashboard; once the operator approves it, you create live keys
(\`cur_live_...\`) there, within the scopes you were granted.

**Student data.** The student endpoints need the matching scope (\`students:read\`, \`students:write\`). With a live key
they also need an active signed data-sharing agreement, which the operator records on your organisation. They return
first names only, and every call is recorded in the disclosure log (a list: one record per student in it), which you can
read in the dashboard.

**Rolling a key.** Roll a key in the dashboard to replace it without downtime: the new key
has the same name and scopes, and the old one keeps working until the end you choose (now, for a leaked key; 1 hour,
24 hours, 7 days or a date). Until then every answer to the old key carries \`Deprecation\` (RFC 9745) and
\`Sunset\` (RFC 8594, the moment it stops), so your logs show which servers still send it.

**Limits.** Each key may make a fixed number of requests (100 by default) in any rolling 60-second window. Every
authenticated response carries \`RateLimit-Policy\`, \`RateLimit\` (IETF draft-10) and \`X-RateLimit-*\`;
a 429 carries \`Retry-After\`.

**Webhooks.** Instead of polling, register an endpoint in the dashboard: changes are POSTed to it as they are
committed, signed per Standard Webhooks. This document's \`webhooks\` section declares every event and its body;
[the webhooks chapter](/docs/webhooks) says when each is sent, how to verify it and what to answer.

**Errors** are RFC 9457 \`application/problem+json\` with a stable \`code\`; see [the error catalogue](/docs/errors).

**Caching.** Catalog responses carry a strong \`ETag\`; send it back in \`If-None-Match\` to get \`304 Not Modified\`.`

const SLUG_PARAMS = Type.Object({
  slug: Type.String({
    description: 'Full lesson slug, `<tier>/<lessonId>-<title-words>`, slash included.',
    pattern: SLUG_PATTERN,
    examples: ['explorer/e1-robots-follow-instructions'],
  }),
})

export function openApiOptions(config: Config): SwaggerOptions {
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Curriculum API',
        version: API_VERSION,
        description: API_DESCRIPTION,
        license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' } as { name: string },
      },
      servers: [{ url: config.publicUrl, description: 'This service' }],
      tags: [
        { name: 'Catalog', description: 'Curriculum tiers and lessons. Any valid key may read them.' },
        { name: 'Students', description: 'Student progress and tier. Scoped keys and a data-sharing agreement only.' },
        {
          name: 'Sync',
          description:
            'Find your students and keep a copy of their tiers and progress in sync: the roster, paged by id, and a ' +
            'feed of every change in commit order. Scope `students:read` and a data-sharing agreement.',
        },
        {
          name: 'Agreements',
          description:
            'The end of a data-sharing agreement: attest that you deleted what you received under it, and the keys ' +
            "that check the district's certificates of deletion.",
        },
        { name: 'Operations', description: 'Liveness and readiness probes; no key needed.' },
      ],
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            description:
              'An API key created in the dashboard: a test key (`cur_test_...`) for the sandbox, ' +
              'or a live key (`cur_live_...`) once live access is approved.',
          },
        },
      },
      security: [{ bearerAuth: [] }],
      webhooks: webhooksSection(config.webhookTimeoutMs),
    },
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => String((json as { $id?: string }).$id ?? `def-${i}`),
    },
    transform: ({ schema, url }) => {
      // The dashboard is HTML for people, not part of the API.
      if (url.startsWith('/dashboard')) return { schema: { ...schema, hide: true } as typeof schema, url }
      if (url !== `${API_PREFIX}/lessons/*`) return { schema, url }
      return { schema: { ...schema, params: SLUG_PARAMS } as typeof schema, url: `${API_PREFIX}/lessons/:slug` }
    },
  }
}
