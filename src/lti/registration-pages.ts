/**
 * The pages a platform's administrator sees at a registration URL, inside the platform's iframe
 * or window: the answer that hands the administrator back to the platform (it posts
 * `org.imsglobal.lti.close`, Dynamic Registration 1.0 section 3.7), and the pages that say why a
 * registration was not made. No cookie, no referrer, never cached; framed by any https page,
 * since the platform's own address (its account's host) is not known in advance.
 */
import { createHash } from 'node:crypto'
import type { FastifyReply } from 'fastify'
import { type Html, html, trusted } from '../dashboard/html.js'

// Posted to whichever window opened the page: the opener (a new window) or the parent (an iframe).
const CLOSE_SCRIPT =
  "var m={subject:'org.imsglobal.lti.close'};" +
  'if(window.opener)window.opener.postMessage(m,"*");' +
  'if(window.parent!==window)window.parent.postMessage(m,"*");'

const STYLE =
  'body{font:16px/1.5 system-ui,sans-serif;margin:1.5rem;max-width:40rem;color:#1a1a1a}' +
  'h1{font-size:1.4rem}code{word-break:break-all}'

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`

function contentSecurityPolicy(withScript: boolean, allowLoopback: boolean): string {
  const ancestors = allowLoopback ? 'https: http://127.0.0.1:* http://localhost:* http://[::1]:*' : 'https:'
  return [
    "default-src 'none'",
    `script-src ${withScript ? sha256(CLOSE_SCRIPT) : "'none'"}`,
    `style-src ${sha256(STYLE)}`,
    "base-uri 'none'",
    "form-action 'none'",
    `frame-ancestors ${ancestors}`,
  ].join('; ')
}

export interface RegistrationAnswer {
  status: number
  title: string
  body: Html
  /** Hands the administrator back to the platform (a registration was made). */
  close?: boolean
}

export function sendRegistrationPage(reply: FastifyReply, allowLoopback: boolean, page: RegistrationAnswer) {
  const close = page.close === true
  const document = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${page.title}</title>
<style>${trusted(STYLE)}</style>
</head>
<body>
<main>
<h1>${page.title}</h1>
${page.body}
</main>
${close ? html`<script>${trusted(CLOSE_SCRIPT)}</script>` : ''}
</body>
</html>
`
  return reply
    .code(page.status)
    .header('content-security-policy', contentSecurityPolicy(close, allowLoopback))
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', 'no-store')
    .header('x-content-type-options', 'nosniff')
    .type('text/html; charset=utf-8')
    .send(document.value)
}

/** The answer to a registration recorded: it waits for the operator. */
export function registeredPage(registration: { name: string; clientId: string; deploymentIds: readonly string[] }) {
  return {
    status: 200,
    title: 'Registration received',
    close: true,
    body: html`<p>The platform <strong>${registration.name}</strong> is registered with client id
<code>${registration.clientId}</code>${
      registration.deploymentIds.length === 0
        ? ''
        : html` and deployment <code>${registration.deploymentIds.join(', ')}</code>`
    }.</p>
<p>It waits for the Curriculum operator to activate it: until then launches are refused. Tell the operator it is
done; nothing more is needed here, and this window may be closed.</p>`,
  } satisfies RegistrationAnswer
}

/** A registration not made: `status`, a title, and what to do about it. */
export function refusedPage(status: number, title: string, detail: string | Html, advice: string | Html) {
  return {
    status,
    title,
    body: html`<p>${detail}</p><p>${advice}</p><p>The tool recorded nothing.</p>`,
  } satisfies RegistrationAnswer
}
