/** Who the audit log names for an operator's action: the signed-in operator's account. */
import type { FastifyRequest } from 'fastify'

export function auditActor(request: FastifyRequest): string {
  return `account:${request.account!.email}`
}
