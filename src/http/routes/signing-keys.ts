/**
 * GET /.well-known/curriculum-signing-keys: the public half of the key that signs certificates of
 * deletion, and of every earlier one a restore kept, as a JSON Web Key Set (RFC 7517), so that
 * whoever holds a certificate can check it without asking anyone (docs/end-of-agreement.md).
 * Needs no key; cached for an hour.
 */
import { Type } from 'typebox'
import type { PublicJwk } from '../../domain/signing-key.js'
import type { TypedApp } from '../app-types.js'
import { problemResponses } from '../schemas/responses.js'

export const SIGNING_KEYS_PATH = '/.well-known/curriculum-signing-keys'

export function signingKeyRoutes(app: TypedApp, keySet: () => Promise<{ keys: PublicJwk[] }>): void {
  app.get(
    SIGNING_KEYS_PATH,
    {
      schema: {
        operationId: 'getSigningKeys',
        summary: 'The keys that sign certificates of deletion',
        description:
          "The service's Ed25519 public keys as a JSON Web Key Set. A certificate of deletion names its key in " +
          '`signature.kid`; its `signature.value` is the Ed25519 signature (base64) of the RFC 8785 canonical form ' +
          'of its `certificate` member. No key needed.',
        tags: ['Agreements'],
        security: [],
        response: {
          200: {
            description: 'The key set.',
            headers: { 'Cache-Control': { type: 'string', description: '`public, max-age=3600`.' } },
            content: { 'application/jwk-set+json': { schema: Type.Ref('SigningKeys') } },
          },
          ...problemResponses(['storage_unavailable']),
        },
      },
    },
    async (_request, reply) =>
      reply
        .header('cache-control', 'public, max-age=3600')
        .type('application/jwk-set+json')
        // A string is sent as it is: the serializers are chosen for `application/json`.
        .send(JSON.stringify(await keySet())),
  )
}
