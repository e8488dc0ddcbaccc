/**
 * Sends a dashboard page in the common layout. Its own module so that routes and views, which
 * the dashboard plugin imports, need not import the plugin back.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { html } from './html.js'
import { layout } from './layout.js'

export function sendPage(
  request: FastifyRequest,
  reply: FastifyReply,
  title: string,
  body: ReturnType<typeof html>,
  status = 200,
  current?: string,
): FastifyReply {
  return reply
    .code(status)
    .type('text/html; charset=utf-8')
    .send(layout(request, { title, body, ...(current === undefined ? {} : { current }) }))
}
