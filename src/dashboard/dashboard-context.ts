/**
 * What the dashboard plugin hands its page-group plugins: its dependencies and the helpers it
 * builds once. Its own module so that pages and views, which the plugin imports, need not import
 * the plugin.
 */
import type { FastifyPluginAsync } from 'fastify'
import type { HeldMailNotice } from '../cases/mail.js'
import type { Clock } from '../clock.js'
import type { SigningKey } from '../domain/signing-key.js'
import type { Limiters } from '../services/limiters.js'
import type { Storage } from '../storage/connection.js'
import type { AfterAnswer } from './after-answer.js'
import type { KeyViews } from './key-views.js'
import type { SessionSupport } from './session.js'
import type { SignInGuard } from './sign-in-guard.js'

/** Who may open a page: anybody, any signed-in account, or one kind of account. */
export type Access = 'public' | 'signed-in' | 'partner' | 'operator'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may open a dashboard page; every dashboard route says it explicitly. */
    dashboard?: Access
    /** The page shows children's data: it opens only from this dashboard (cross-site-navigation.ts). */
    studentData?: true
    /**
     * A multipart form (a file upload), whose CSRF token is its first field: the handler checks it
     * with `verifyCsrf` before reading the file, instead of the session hook, which has no body yet.
     */
    csrfInHandler?: true
  }
}

export interface DashboardDeps {
  storage: Storage
  clock: Clock
  limiters: Limiters
  /** The served OpenAPI document, for the API reference rendered with a partner's own key. */
  openApi: () => Record<string, unknown>
  /** Writes this instance's pending usage counts, so a usage page is current. */
  flushUsage: () => Promise<void>
  /** Writes this instance's pending request-log entries, so a request-log page is current. */
  flushRequestLog?: () => Promise<void>
  /** The API's route templates, which the request log's route filter offers. */
  apiRoutes?: () => readonly string[]
  /** MAX_KEYS_PER_ORGANISATION: active keys an organisation may hold. */
  maxKeysPerOrganisation: number
  /** MAX_WEBHOOK_ENDPOINTS_PER_ORGANISATION: enabled webhook endpoints an organisation may have. */
  maxWebhookEndpoints: number
  /** WEBHOOK_ALLOW_LOOPBACK: endpoints on loopback accepted (local development and tests). */
  webhookAllowLoopback: boolean
  /** LTI_ALLOW_LOOPBACK: platforms on loopback accepted in manual LTI registrations (local development and tests). */
  ltiAllowLoopback?: boolean
  /** ROSTER_UPLOAD_DIR and ROSTER_UPLOAD_MAX_MIB: where uploaded roster exports wait, and their largest size. */
  rosterUploads?: { dir: string; maxBytes: number }
  /** AGREEMENT_DISPOSITION_DAYS: the disposition period a new agreement's form starts with (default 30). */
  agreementDispositionDays?: number
  /** Outgoing mail: PUBLIC_URL for the links it carries, and whether SMTP_URL sends it or it is held. */
  mail: MailDeps
  /** The key that signs certificates of deletion (services/signing-keys.ts); loaded from storage unless given. */
  signingKey?: () => Promise<SigningKey>
}

export interface MailDeps {
  publicUrl: string
  /** SMTP_URL is set: the mail worker sends what is queued. */
  sending: boolean
  /** SMTP_URL is unset: where each queued message is announced in one log line. */
  held: HeldMailNotice | undefined
}

export interface DashboardContext extends DashboardDeps {
  signingKey: () => Promise<SigningKey>
  sessions: SessionSupport
  guard: SignInGuard
  keyViews: KeyViews
  afterAnswer: AfterAnswer
}

/** A page group's options: the plugin registers each group with the context it built. */
export interface PageOptions {
  context: DashboardContext
}

/** One page group: an encapsulated plugin inheriting the dashboard's hooks, parser and error pages. */
export type PagePlugin = FastifyPluginAsync<PageOptions>
