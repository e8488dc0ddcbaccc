/**
 * The demo platform's pages for a person: one course page on the platform's own origin that
 * registers a tool dynamically, lets "the teacher" add lessons by deep linking, opens each lesson
 * as the student Ada, and shows the gradebook the tool's scores fill. Each action starts an LTI
 * login in an iframe, and its `lti_message_hint` tells `/authorize` which claims to sign.
 */
import { AGS_SCOPE, CLAIM, MESSAGE, ROLE, TOOL_CONFIGURATION } from '../domain/lti-claims.js'
import type { LaunchClaims, PlacedLink, TestPlatform } from './lti-platform.js'

/** The student the demo launches: a made-up first name and a stable `sub`. */
export const DEMO_STUDENT = { sub: 'demo-student-ada', givenName: 'Ada' }
const DEMO_TEACHER = { sub: 'demo-teacher-grace', givenName: 'Grace' }
const DEEP_LINKING_HINT = 'deep-linking'
const LAUNCH_HINT = 'launch:'

const escaped = (value: string) => value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

function page(title: string, body: string): string {
  return (
    '<!doctype html><html lang="en"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width, initial-scale=1">' +
    `<title>${escaped(title)}</title>` +
    '<style>body{font-family:sans-serif;max-width:60rem;margin:1rem auto;padding:0 1rem}' +
    'iframe{width:100%;height:42rem;border:1px solid #888}table{border-collapse:collapse}' +
    'td,th{border:1px solid #888;padding:.25rem .5rem;text-align:left}</style></head>' +
    `<body><main>${body}</main></body></html>`
  )
}

/** The tool as it registered itself: where its logins start and what its launches target. */
function registeredTool(platform: TestPlatform): { loginUrl: string; targetLinkUri: string; name: string } | undefined {
  const request = platform.registrations.at(-1)?.request
  if (request === undefined) return undefined
  const tool = (request[TOOL_CONFIGURATION] ?? {}) as Record<string, unknown>
  return {
    loginUrl: String(request.initiate_login_uri),
    targetLinkUri: String(tool.target_link_uri),
    name: String(request.client_name),
  }
}

/** The tool's login URL for one action of the course page, as a platform's iframe opens it. */
function loginUrl(platform: TestPlatform, loginHint: string, messageHint: string): string | undefined {
  const tool = registeredTool(platform)
  if (tool === undefined) return undefined
  const url = new URL(tool.loginUrl)
  url.searchParams.set('iss', platform.issuer)
  url.searchParams.set('client_id', platform.clientId)
  url.searchParams.set('lti_deployment_id', platform.deploymentId)
  url.searchParams.set('login_hint', loginHint)
  url.searchParams.set('lti_message_hint', messageHint)
  url.searchParams.set('target_link_uri', tool.targetLinkUri)
  return url.toString()
}

/** The claims `/authorize` signs for a login the course page started; none for any other. */
export function demoLaunchClaims(platform: TestPlatform, login: Record<string, string>): LaunchClaims {
  const tool = registeredTool(platform)
  if (tool === undefined) return {}
  const hint = login.lti_message_hint ?? ''
  const common = { [CLAIM.targetLinkUri]: tool.targetLinkUri }
  if (hint === DEEP_LINKING_HINT)
    return platform.launchClaims('', {
      ...common,
      sub: DEMO_TEACHER.sub,
      given_name: DEMO_TEACHER.givenName,
      [CLAIM.messageType]: MESSAGE.deepLinkingRequest,
      [CLAIM.roles]: [ROLE.instructor],
      [CLAIM.resourceLink]: undefined,
      [CLAIM.ags]: undefined,
      [CLAIM.deepLinkingSettings]: {
        deep_link_return_url: `${platform.origin}/deep-link-return`,
        accept_types: ['ltiResourceLink'],
        accept_multiple: true,
        data: 'demo-course',
      },
    })
  const link = hint.startsWith(LAUNCH_HINT)
    ? platform.placedLinks.find((candidate) => candidate.id === hint.slice(LAUNCH_HINT.length))
    : undefined
  if (link === undefined) return {}
  return platform.launchClaims('', {
    ...common,
    sub: DEMO_STUDENT.sub,
    given_name: DEMO_STUDENT.givenName,
    [CLAIM.resourceLink]: { id: link.id, title: link.title },
    [CLAIM.custom]: link.custom,
    [CLAIM.ags]: {
      scope: [AGS_SCOPE.lineItem, AGS_SCOPE.score],
      lineitems: `${platform.origin}/contexts/course-1/lineitems`,
      ...(link.lineItem === null ? {} : { lineitem: link.lineItem }),
    },
  })
}

function gradebook(platform: TestPlatform): string {
  const latest = new Map<string, (typeof platform.scores)[number]>()
  for (const score of platform.scores) latest.set(`${score.lineItem} ${String(score.body.userId)}`, score)
  if (latest.size === 0) return '<p id="gradebook-empty">No scores yet.</p>'
  const titleOf = (lineItem: string) =>
    platform.placedLinks.find((link) => link.lineItem === lineItem)?.title ?? lineItem
  const rows = [...latest.values()].map(({ lineItem, body }) => {
    const user = body.userId === DEMO_STUDENT.sub ? DEMO_STUDENT.givenName : String(body.userId)
    const score = body.scoreGiven === undefined ? '' : `${String(body.scoreGiven)} / ${String(body.scoreMaximum)}`
    const cells = [titleOf(lineItem), user, String(body.activityProgress), String(body.gradingProgress), score]
    return `<tr>${cells.map((cell) => `<td>${escaped(cell)}</td>`).join('')}</tr>`
  })
  return (
    '<table id="gradebook"><caption>Scores received from the tool</caption><thead><tr><th>Lesson</th>' +
    '<th>Student</th><th>Activity</th><th>Grading</th><th>Score</th></tr></thead>' +
    `<tbody>${rows.join('')}</tbody></table>`
  )
}

function lessonList(links: readonly PlacedLink[]): string {
  if (links.length === 0) return '<p>No lessons yet: add one as the teacher.</p>'
  const items = links.map(
    (link) =>
      `<li>${escaped(link.title)} <a href="/student?link=${encodeURIComponent(link.id)}">Open as student ` +
      `${escaped(DEMO_STUDENT.givenName)}</a></li>`,
  )
  return `<ul id="lessons">${items.join('')}</ul>`
}

function coursePage(platform: TestPlatform): string {
  const tool = registeredTool(platform)
  const registration =
    tool === undefined
      ? '<p>No tool yet. Paste the tool&#39;s registration URL (the dashboard makes one):</p>'
      : `<p id="registered">Registered: ${escaped(tool.name)}, client id <code>${escaped(platform.clientId)}</code>, ` +
        `deployment <code>${escaped(platform.deploymentId)}</code>. Activate it on the tool&#39;s dashboard.</p>`
  return page(
    'Demo learning platform',
    '<h1>Demo learning platform</h1><p>Course CS 101, Computing for everyone.</p>' +
      `<h2>Register a tool</h2>${registration}` +
      '<form method="get" action="/register-a-tool"><label for="url">The tool&#39;s registration URL</label> ' +
      '<input id="url" name="url" type="url" required size="60"> <button>Register</button></form>' +
      '<h2>Add a lesson (as the teacher)</h2>' +
      (tool === undefined ? '<p>Register a tool first.</p>' : '<p><a href="/teacher">Add a lesson</a></p>') +
      `<h2>Lessons of the course</h2>${lessonList(platform.placedLinks)}` +
      `<h2>Gradebook</h2>${gradebook(platform)}` +
      `<p>Issuer <code>${escaped(platform.issuer)}</code></p>`,
  )
}

function framed(title: string, heading: string, src: string, after = ''): string {
  return page(
    title,
    `<h1>${escaped(heading)}</h1><p><a href="/">Back to the course</a></p>${after}` +
      `<iframe title="${escaped(title)}" src="${escaped(src)}"></iframe>`,
  )
}

/** Adds the course page and its actions to the platform (before it starts), and answers logins by them. */
export function addDemoPages(platform: TestPlatform): void {
  const app = platform.app
  platform.nextLaunch = (login) => demoLaunchClaims(platform, login)
  app.get('/', async (_request, reply) =>
    reply.type('text/html').header('cache-control', 'no-store').send(coursePage(platform)),
  )

  app.get('/register-a-tool', async (request, reply) => {
    const url = (request.query as Record<string, string>).url ?? ''
    if (!/^https?:\/\//.test(url) || !URL.canParse(url))
      return reply
        .code(400)
        .type('text/html')
        .send(
          page(
            'Not a URL',
            '<h1>Not a URL</h1><p>Paste the registration URL the tool gave you.</p><p><a href="/">Back</a></p>',
          ),
        )
    const script =
      '<script>window.addEventListener("message",function(e){if(e.data&&e.data.subject==="org.imsglobal.lti.close")' +
      '{document.getElementById("status").textContent="Registered"}})</script>'
    return reply
      .type('text/html')
      .send(
        framed(
          'Tool registration',
          'Register a tool',
          platform.registrationUrl(url),
          `<p id="status" role="status">Registering...</p>${script}`,
        ),
      )
  })

  const noTool = page('No tool', '<h1>No tool registered</h1><p><a href="/">Register a tool first</a>.</p>')
  app.get('/teacher', async (_request, reply) => {
    const src = loginUrl(platform, DEMO_TEACHER.sub, DEEP_LINKING_HINT)
    if (src === undefined) return reply.code(409).type('text/html').send(noTool)
    return reply.type('text/html').send(framed('Add a lesson', 'Add a lesson (as the teacher)', src))
  })

  app.get('/student', async (request, reply) => {
    const id = (request.query as Record<string, string>).link ?? ''
    const link = platform.placedLinks.find((candidate) => candidate.id === id)
    if (link === undefined)
      return reply
        .code(404)
        .type('text/html')
        .send(page('No such lesson', '<h1>No such lesson</h1><p><a href="/">Back</a></p>'))
    const src = loginUrl(platform, DEMO_STUDENT.sub, `${LAUNCH_HINT}${link.id}`)
    if (src === undefined) return reply.code(409).type('text/html').send(noTool)
    return reply.type('text/html').send(framed('Lesson', `${link.title} (as ${DEMO_STUDENT.givenName})`, src))
  })
}
