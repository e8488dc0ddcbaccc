/**
 * The one page that ever shows a key: in the response to the request that created it. It
 * carries a copy button, curl commands that work as pasted, and the API reference with the key
 * filled in. Reloading or coming back shows it no more; only the key's hash is stored.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { referenceSections } from '../../http/reference-page.js'
import type { ApiKeyRow } from '../../storage/database.js'
import { sandboxStudents } from '../../storage/sandbox-repository.js'
import type { DashboardContext } from '../dashboard-plugin.js'
import { sendPage } from '../dashboard-plugin.js'
import { html, trusted } from '../html.js'

export async function newKeyPage(
  request: FastifyRequest,
  reply: FastifyReply,
  context: DashboardContext,
  created: { key: string; row: ApiKeyRow; welcome?: boolean },
): Promise<FastifyReply> {
  // The partner reached this page at this origin, so the API answers there too: examples
  // built on it work as pasted (behind a proxy, TRUST_PROXY makes protocol and host right).
  const base = `${request.protocol}://${request.host}`
  const doc = { ...context.openApi(), servers: [{ url: base }] }
  const { key, row } = created
  const scopes = row.scopes.split(' ').filter(Boolean)
  const student = row.mode === 'test' ? (await sandboxStudents(context.storage.db, row.organisation_id))[0] : undefined
  const examples = [`curl -H 'Authorization: Bearer ${key}' ${base}/api/v1/tiers`]
  if (scopes.includes('students:read')) {
    examples.push(`curl -H 'Authorization: Bearer ${key}' ${base}/api/v1/students/${student?.id ?? '<student-id>'}/progress`)
  }
  if (scopes.includes('students:write')) {
    examples.push(
      `curl -X POST -H 'Authorization: Bearer ${key}' -H 'Content-Type: application/json' -d '{"tier":"builder"}' ${base}/api/v1/students/${student?.id ?? '<student-id>'}/enroll`,
    )
  }
  const body = html`${created.welcome ? html`<p>Your account and your sandbox are ready. The sandbox holds made-up students with progress; test keys reach them and the real catalog, and never a real child's data.</p>` : ''}
<section class="card" aria-labelledby="key-heading">
  <h2 id="key-heading">${row.mode === 'test' ? 'Your test key' : 'Your new live key'}: ${row.name}</h2>
  <p><strong>Copy it now. It is shown only this once</strong>: only a hash of it is stored, so nobody can show it to you again. If you lose it, revoke it and create another.</p>
  <label for="new-key">API key (${scopes.length === 0 ? 'catalog only' : scopes.join(', ')})</label>
  <input id="new-key" class="secret" type="text" readonly value="${key}" data-copy>
</section>
<h2>Try it</h2>
<p>These commands work as pasted${student ? html`; the student is ${student.first_name}, one of your sandbox students` : ''}:</p>
${examples.map((example, index) => html`<pre id="example-${index}" class="example" data-copy>${example}</pre>`)}
<details>
  <summary>The API reference with this key in every example</summary>
  <div class="reference">${trusted(referenceSections(doc, key))}</div>
</details>
<p><a class="button" href="/dashboard/partner">Go to your overview</a></p>`
  return sendPage(request, reply, created.welcome ? 'Welcome' : 'Key created', body, 201)
}
