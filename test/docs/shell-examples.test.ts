/**
 * How examples are read from the pages: what makes one example, which status it documents,
 * and what a reader would have to replace before it runs.
 */
import { describe, expect, it } from 'vitest'
import { curlCommandsOfText, examplesOfHtml, examplesOfMarkdown } from './shell-examples.js'

describe('shell examples', () => {
  it('reads consecutive commands as one example, expecting the status its output comment shows, else a 2xx', () => {
    const readme = [
      'Text.',
      '```sh',
      '# List tiers',
      'curl -H "Authorization: Bearer $KEY" http://localhost:3000/api/v1/tiers',
      '# {"tiers":[...]}',
      '',
      '# Revalidate',
      "ETAG=$(curl -s -D - -o /dev/null http://localhost:3000/api/v1/tiers | awk '{ print $2 }')",
      'curl -i -H "If-None-Match: $ETAG" \\',
      '     http://localhost:3000/api/v1/tiers',
      '# HTTP/1.1 304 Not Modified',
      '```',
      '```json',
      '{"curl": "not a command"}',
      '```',
      '```sh',
      'npm start',
      '```',
    ].join('\n')
    const examples = examplesOfMarkdown(readme, 'README.md')
    expect(examples.map((e) => [e.where, e.expected])).toEqual([
      ['README.md:4', '2xx'],
      ['README.md:8', 304],
    ])
    expect(examples[1]!.script.split('\n')).toHaveLength(3)
  })

  it('flags placeholders a reader would have to replace', () => {
    const [example] = examplesOfMarkdown(
      '```sh\ncurl -H \'If-None-Match: "<etag from the last response>"\' http://x/\n```',
      'README.md',
    )
    expect(example!.placeholders).toEqual(['<etag from the last response>'])
  })

  it('reads HTML examples as a reader copies them, entities decoded', () => {
    const html =
      '<p>x</p><pre><code>curl &quot;http://x/api/v1/tiers&quot; \\\n  -H &quot;Authorization: Bearer $API_KEY&quot; -d &#39;{}&#39;</code></pre><pre>npm start</pre>'
    const examples = examplesOfHtml(html, '/docs')
    expect(examples).toHaveLength(1)
    expect(examples[0]!.script).toBe('curl "http://x/api/v1/tiers" \\\n  -H "Authorization: Bearer $API_KEY" -d \'{}\'')
  })

  it('reads the curl commands of printed text with their continuation lines', () => {
    const printed =
      " Try:\n   curl -H 'Authorization: Bearer k' \\\n     http://x/api/v1/tiers\n API reference: http://x/docs"
    expect(curlCommandsOfText(printed, 'banner').map((e) => e.script)).toEqual([
      "curl -H 'Authorization: Bearer k' \\\nhttp://x/api/v1/tiers",
    ])
  })
})
