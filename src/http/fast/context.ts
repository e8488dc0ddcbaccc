/** What every part of the fast path works with, built once by index.ts. */
import type { FastifyBaseLogger } from 'fastify'
import type { Clock } from '../../clock.js'
import type { CatalogState } from '../../services/catalog-state.js'
import type { RequestLog } from '../../services/request-log.js'
import type { CatalogRepresentations } from '../catalog-representations.js'
import type { EnrollAnswer } from './enroll.js'
import type { LocalAdmission } from './local-admission.js'
import type { ProgressAnswer } from './progress.js'

export interface FastPathContext {
  readonly catalog: CatalogState<CatalogRepresentations>
  readonly clock: Clock
  /** The RateLimit-Policy field. */
  readonly policy: string
  /** The access log, when it is on (info level); the same line as the Fastify path writes. */
  readonly accessLog: FastifyBaseLogger | undefined
  /** The request log, when it is on. */
  readonly requestLog: RequestLog | undefined
  readonly admission: LocalAdmission
  /** Progress reads, where storage can read synchronously. */
  readonly progress: ProgressAnswer | undefined
  readonly enroll: EnrollAnswer
}
