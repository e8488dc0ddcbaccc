/**
 * The enrolment's QR code: drawn back into pixels from the SVG's own path, it decodes to the text
 * it was made from; the markup is well formed, holds only svg, title, rect and path with
 * presentation attributes (nothing the dashboard's CSP would block: no style, no script, no
 * link), carries its text alternative escaped, and is the same for the same text.
 */
import decodeQR from 'qr/decode.js'
import { describe, expect, it } from 'vitest'
import { qrSvg } from '../../src/domain/qr-svg.js'
import { totpUri } from '../../src/domain/totp.js'

const URI = totpUri('GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ', 'dana.o-connor+ops@acme.example')
const LABEL = 'QR code to add this account to an authenticator app'

const ELEMENTS: Record<string, string[]> = {
  svg: ['xmlns', 'viewBox', 'width', 'height', 'role', 'aria-label', 'shape-rendering'],
  title: [],
  rect: ['width', 'height', 'fill'],
  path: ['fill', 'd'],
}

interface Element {
  name: string
  attributes: Record<string, string>
}

/** The elements of `markup` in document order; throws unless every tag is allowed and closed in order. */
function parse(markup: string): Element[] {
  const elements: Element[] = []
  const open: string[] = []
  const tag = /<(\/?)([a-zA-Z][\w-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>|([^<]+)/gy
  let match: RegExpExecArray | null
  let at = 0
  while ((match = tag.exec(markup)) !== null) {
    at = tag.lastIndex
    const [, closing, name, attributeText, selfClosing, text] = match
    if (text !== undefined) {
      if (open.at(-1) !== 'title') throw new Error(`text outside <title>: ${text}`)
      continue
    }
    if (closing) {
      if (open.pop() !== name) throw new Error(`</${name}> closes nothing open`)
      continue
    }
    const attributes = Object.fromEntries(
      [...(attributeText ?? '').matchAll(/([\w:-]+)="([^"]*)"/g)].map((a) => [a[1]!, a[2]!]),
    )
    elements.push({ name: name!, attributes })
    if (!selfClosing) open.push(name!)
  }
  if (at !== markup.length) throw new Error(`not markup at ${at}: ${markup.slice(at, at + 40)}`)
  if (open.length > 0) throw new Error(`left open: ${open.join(', ')}`)
  return elements
}

/** The SVG drawn into an RGB bitmap, `scale` pixels a module, from its rect and path alone. */
function rasterise(markup: string, scale = 4): { width: number; height: number; data: Uint8Array } {
  const elements = parse(markup)
  const [, , width] = elements[0]!.attributes.viewBox!.split(' ').map(Number) as [number, number, number, number]
  const pixels = width * scale
  const data = new Uint8Array(pixels * pixels * 3).fill(255)
  const d = elements.find((element) => element.name === 'path')!.attributes.d!
  for (const run of d.matchAll(/M(\d+) (\d+)h(\d+)v1h-(\d+)z/g)) {
    const [x, y, w] = [Number(run[1]), Number(run[2]), Number(run[3])]
    expect(Number(run[4])).toBe(w)
    for (let py = y * scale; py < (y + 1) * scale; py++)
      data.fill(0, (py * pixels + x * scale) * 3, (py * pixels + (x + w) * scale) * 3)
  }
  // Every command of the path is a run: nothing in it went unread.
  expect(d.replace(/M\d+ \d+h\d+v1h-\d+z/g, '')).toBe('')
  return { width: pixels, height: pixels, data }
}

describe('QR codes as SVG', () => {
  it('decodes back to the otpauth URI it was made from', () => {
    expect(decodeQR(rasterise(qrSvg(URI, { label: LABEL })))).toBe(URI)
    expect(decodeQR(rasterise(qrSvg('hello', { label: LABEL }), 6))).toBe('hello')
  })

  it('is well formed and holds only svg, title, rect and path, with no style, script or link', () => {
    const markup = qrSvg(URI, { label: LABEL })
    const elements = parse(markup)
    expect(elements.map((element) => element.name)).toEqual(['svg', 'title', 'rect', 'path'])
    for (const { name, attributes } of elements)
      expect(ELEMENTS[name]).toEqual(expect.arrayContaining(Object.keys(attributes)))
    expect(markup).not.toMatch(/style|script|href|url\(|on\w+=/i)
  })

  it('has a text alternative, escaped, and a quiet zone of four modules on white', () => {
    const markup = qrSvg(URI, { label: 'Scan "this" <now> & here', modulePixels: 5 })
    const [svg, , rect] = parse(markup)
    expect(svg!.attributes).toMatchObject({ role: 'img', 'aria-label': 'Scan &quot;this&quot; &lt;now&gt; &amp; here' })
    expect(markup).toContain('<title>Scan &quot;this&quot; &lt;now&gt; &amp; here</title>')
    const size = Number(svg!.attributes.width) / 5
    expect(svg!.attributes.viewBox).toBe(`0 0 ${size} ${size}`)
    expect(rect!.attributes).toEqual({ width: String(size), height: String(size), fill: '#fff' })
    const d = parse(markup)[3]!.attributes.d!
    const starts = [...d.matchAll(/M(\d+) (\d+)h(\d+)/g)].map((m) => [Number(m[1]), Number(m[2]), Number(m[3])])
    for (const [x, y, w] of starts) {
      expect(Math.min(x!, y!)).toBeGreaterThanOrEqual(4)
      expect(Math.max(x! + w! - 1, y!)).toBeLessThan(size - 4)
    }
  })

  it('draws the same text the same way every time', () => {
    expect(qrSvg(URI, { label: LABEL })).toBe(qrSvg(URI, { label: LABEL }))
    expect(qrSvg(URI, { label: LABEL })).not.toBe(qrSvg(`${URI}x`, { label: LABEL }))
  })
})
