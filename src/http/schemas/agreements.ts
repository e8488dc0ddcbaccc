/**
 * The end of a data-sharing agreement as the API shows it: a partner's deletion attestation
 * (POST /api/v1/deletion-attestations), and the key set that checks certificates of deletion
 * (GET /.well-known/curriculum-signing-keys).
 */
import { type Static, Type } from 'typebox'
import { TimestampSchema, UuidSchema } from './common.js'

export const AttestationRequestSchema = Type.Object(
  {
    agreementId: Type.Optional(
      Type.String({
        ...UuidSchema,
        description:
          'The ended agreement whose data you deleted. Leave it out when one agreement awaits an attestation ' +
          '(the usual case); the dashboard shows each ended agreement with its id.',
      }),
    ),
  },
  {
    $id: 'DeletionAttestationRequest',
    title: 'DeletionAttestationRequest',
    additionalProperties: false,
    examples: [{}],
  },
)

const nullableTimestamp = (description: string) =>
  Type.Unsafe<string | null>({ type: ['string', 'null'], format: 'date-time', description })

export const DeletionAttestationSchema = Type.Object(
  {
    agreementId: UuidSchema,
    documentRef: Type.String({ description: 'The reference of the signed agreement.' }),
    endedAt: Type.String({ ...TimestampSchema, description: 'When the agreement stopped applying.' }),
    deletionDueAt: Type.String({
      ...TimestampSchema,
      description: 'The end plus the disposition period: the day your copy had to be deleted by.',
    }),
    unlinkedAt: nullableTimestamp(
      "When your organisation's links to the students ended, each with a `student.unlinked` notice; null while " +
        'the disposition period runs (an attestation may come early).',
    ),
    students: Type.Integer({
      minimum: 0,
      description:
        'How many students the deletion covers: every student shared with your organisation under the agreement ' +
        '(`coverage` breaks it down). Your attestation covers this whole list.',
    }),
    coverage: Type.Object(
      {
        since: Type.String({
          ...TimestampSchema,
          description: 'The start of the first agreement whose data this end covers: students shared since are listed.',
        }),
        linked: Type.Integer({
          minimum: 0,
          description:
            'Linked when the links ended (or now, while the period runs): each gets a `student.unlinked` then.',
        }),
        unlinked: Type.Integer({
          minimum: 0,
          description: 'Unlinked earlier under the agreement; each was sent a `student.unlinked` notice then.',
        }),
        erased: Type.Integer({
          minimum: 0,
          description: 'Erased earlier by the district; each was sent a `student.deleted` notice then.',
        }),
      },
      { additionalProperties: false, description: 'Whom `students` counts.' },
    ),
    attestedAt: Type.String({ ...TimestampSchema, description: 'When the attestation was recorded.' }),
    keyId: UuidSchema,
  },
  { $id: 'DeletionAttestation', title: 'DeletionAttestation', additionalProperties: false },
)

export const SigningKeysSchema = Type.Object(
  {
    keys: Type.Array(
      Type.Object(
        {
          kty: Type.Literal('OKP'),
          crv: Type.Literal('Ed25519'),
          x: Type.String({ description: 'The public key, base64url (RFC 8037).' }),
          kid: Type.String({ description: "The key's RFC 7638 thumbprint: a certificate's `signature.kid`." }),
          use: Type.Literal('sig'),
          alg: Type.Literal('EdDSA'),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { $id: 'SigningKeys', title: 'SigningKeys', additionalProperties: false },
)

export type DeletionAttestationBody = Static<typeof DeletionAttestationSchema>
