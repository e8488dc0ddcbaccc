/**
 * The page that shows a new key, at an address of its own (key-views.ts): the form that creates
 * a key answers 303 here, so a reload shows the key again instead of re-sending the form. It
 * carries a copy button, curl commands, and the API reference with the key filled in. After
 * KEY_VIEW_MS, or once the partner hides it, the page says the key was shown and how to get
 * another: only the key's hash is kept.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { API_PREFIX } from '../../http/api-prefix.js'
import { referenceSections, schemaSections } from '../../http/reference-page.js'
import { exampleStudent } from '../../storage/example-student-repository.js'
import type { ApiKeyRow } from '../../storage/tables.js'
import type { DashboardContext } from '../dashboard-context.js'
import { html, trusted } from '../html.js'
import type { ShownKey } from '../key-views.js'
import { csrfField } from '../layout.js'
import { sendPage } from '../send-page.js'
import { utcMinute } from '../times.js'

/** The placeholder a command carries when the organisation has no student to name. */
export const STUDENT_PLACEHOLDER = '<student-id>'

/** Creates the key's one-time view and sends the browser to it (POST-redirect-GET). */
export async function showNewKey(
  request: FastifyRequest,
  reply: FastifyReply,
  context: DashboardContext,
  created: { key: string; row: ApiKeyRow },
  options: { welcome?: boolean } = {},
): Promise<FastifyReply> {
  const viewToken = await context.keyViews.offer(request, created, options)
  return reply.redirect(`/dashboard/partner/keys/shown/${viewToken}`, 303)
}

export async function newKeyPage(
  request: FastifyRequest,
  reply: FastifyReply,
  context: DashboardContext,
  shown: ShownKey & { row: ApiKeyRow; viewToken: string },
): Promise<FastifyReply> {
  // The partner reached this page at this origin, so the API answers there too: examples
  // built on it work as pasted (behind a proxy, TRUST_PROXY makes protocol and host right).
  const base = `${request.protocol}://${request.host}`
  const doc = { ...context.openApi(), servers: [{ url: base }] }
  const { key, row } = shown
  const scopes = row.scopes.split(' ').filter(Boolean)
  const usesStudent = scopes.length > 0
  const student = usesStudent
    ? await exampleStudent(context.storage.db, row.organisation_id, row.mode === 'test')
    : undefined
  const studentId = student?.id ?? STUDENT_PLACEHOLDER
  const examples = [`curl -H 'Authorization: Bearer ${key}' ${base}${API_PREFIX}/tiers`]
  if (scopes.includes('students:read')) {
    examples.push(`curl -H 'Authorization: Bearer ${key}' ${base}${API_PREFIX}/students/${studentId}/progress`)
  }
  if (scopes.includes('students:write')) {
    // The student's own tier: the command works, and changes nothing about the student.
    examples.push(
      [
        'curl -X POST',
        `-H 'Authorization: Bearer ${key}'`,
        `-H 'Content-Type: application/json'`,
        `-d '{"tier":"${student?.tier ?? 'builder'}"}'`,
        `${base}${API_PREFIX}/students/${studentId}/enroll`,
      ].join(' '),
    )
  }
  const whose = row.mode === 'test' ? 'one of your sandbox’s made-up students' : 'a student linked to your organisation'
  const unchanged =
    student !== undefined && scopes.includes('students:write')
      ? html` (the enrolment sets the tier the student has, ${student.tier}, so nothing changes)`
      : ''
  const named = student === undefined ? '' : html`; the student is ${student.first_name}, ${whose}${unchanged}`
  const intro =
    !usesStudent || student !== undefined
      ? html`<p>These commands work as pasted${named}:</p>`
      : html`<p>The first command works as pasted.
In the others, replace <code>${STUDENT_PLACEHOLDER}</code> with the id of one of your students:
none is linked to your organisation yet (the operator links them).</p>`
  const welcome = html`<p>Your account and your sandbox are ready. The sandbox holds made-up students with progress;
test keys reach them and the real catalog, and never a real child's data.</p>`
  const until = utcMinute(new Date(shown.expiresAt).toISOString())
  const body = html`${shown.welcome ? welcome : ''}
<section class="card" aria-labelledby="key-heading">
  <h2 id="key-heading">${row.mode === 'test' ? 'Your test key' : 'Your new live key'}: ${row.name}</h2>
  <p><strong>Copy it now.</strong> This page shows it until ${until}, in this browser session only (reloading is safe).
  After that only a hash of it is kept, so nobody can show it to you again;
  if you lose it, revoke it and create another.</p>
  <label for="new-key">API key (${scopes.length === 0 ? 'catalog only' : scopes.join(', ')})</label>
  <input id="new-key" class="secret" type="text" readonly value="${key}" data-copy>
  <form method="post" action="/dashboard/partner/keys/shown/${shown.viewToken}/hide">
    ${csrfField(request)}
    <button type="submit">I have copied it: hide the key</button>
  </form>
</section>
<h2>Try it</h2>
${intro}
${examples.map((example, index) => html`<pre id="example-${index}" class="example" data-copy>${example}</pre>`)}
<details>
  <summary>The API reference with this key in every example</summary>
  <div class="reference">${trusted(referenceSections(doc, { baseUrl: base, apiKey: key, studentId: student?.id }))}
  <h2>Schemas</h2>${trusted(schemaSections(doc))}</div>
</details>
<p><a class="button" href="/dashboard/partner">Go to your overview</a></p>`
  return sendPage(request, reply, shown.welcome ? 'Welcome' : 'Key created', body, 200)
}

/** A view that is over (or was never this session's): say so, and how to get a key now. */
export function keyGonePage(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const body = html`<p>A new key is shown once: on this page, to the browser session that created it,
for 10 minutes or until you hide it. Its time is over, it was hidden, or this is another session,
so it is not shown here; only a hash of it is kept.</p>
<p>If you copied it, it keeps working.
If not, create another key on your overview and revoke the one you cannot use.</p>
<p><a class="button" href="/dashboard/partner">Go to your overview</a></p>`
  return sendPage(request, reply, 'This key is no longer shown', body, 410)
}
