/**
 * A webhook delivery's state as its endpoint's log shows it: delivered, queued (not tried yet),
 * retrying with the time of the next attempt, failed (the whole schedule used up), or not sent
 * because the organisation's access to the student had ended.
 */
import type { WebhookDeliveryRow } from '../../../../storage/tables.js'
import { type Html, html } from '../../../html.js'
import { utcMinute } from '../../../times.js'

const badge = (kind: string, label: string): Html => html`<span class="state ${kind}">${label}</span>`

export function deliveryState(delivery: Pick<WebhookDeliveryRow, 'state' | 'attempts' | 'next_attempt_at'>): Html {
  switch (delivery.state) {
    case 'delivered':
      return badge('delivered', 'delivered')
    case 'failed':
      return badge('failed', 'failed')
    case 'not_sent':
      return badge('not-sent', 'not sent: access ended')
    case 'pending':
      if (delivery.attempts === 0 || delivery.next_attempt_at === null) return badge('queued', 'queued')
      return html`${badge('retrying', 'retrying')} (next attempt at ${utcMinute(delivery.next_attempt_at)})`
  }
}
