/**
 * A QR code drawn on the server as inline SVG markup (the TOTP enrolment's otpauth:// URI), with no
 * external service: `qr` encodes the symbol, this draws it.
 *
 * Inline `<svg>` rather than a `data:image/svg+xml` <img>: the dashboard's CSP (`default-src
 * 'none'; style-src 'self'; img-src 'self' data:`) restricts `style` attributes and elements and
 * fetched images, not markup in the page, and the markup holds neither: only `svg`, `title`,
 * `rect` and `path` with presentation attributes (`fill`, `shape-rendering`), which CSP does not
 * treat as styles. It needs no base64 (a third larger) and the page's own stylesheet can size it.
 * `role="img"` with `aria-label` and a `<title>` give it a text alternative; the page should also
 * show the secret as text, for anyone who cannot scan.
 */
import encodeQR from 'qr'
import { escapeHtml } from './html-escape.js'

/** The quiet zone ISO/IEC 18004 asks around a QR code, in modules. */
const QUIET_ZONE = 4

export interface QrSvgOptions {
  /** The text alternative: what the code is for (e.g. "QR code to add this account to an authenticator app"). */
  label: string
  /** Pixels per module of the width and height attributes; the viewBox is in modules. */
  modulePixels?: number
}

/**
 * `text` as an SVG QR code: medium error correction (15% of the symbol may be lost), dark modules
 * one `path` of unit squares on a white square, so that a dark page around it does not hide it.
 * The same text always gives the same markup.
 */
export function qrSvg(text: string, { label, modulePixels = 4 }: QrSvgOptions): string {
  const modules = encodeQR(text, 'raw', { ecc: 'medium', border: QUIET_ZONE })
  const size = modules.length
  const runs: string[] = []
  modules.forEach((row, y) => {
    for (let x = 0; x < size; x++) {
      if (!row[x]) continue
      const start = x
      while (x + 1 < size && row[x + 1]) x++
      const width = x - start + 1
      runs.push(`M${start} ${y}h${width}v1h-${width}z`)
    }
  })
  const alt = escapeHtml(label)
  const pixels = size * modulePixels
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${size} ${size}" width="${pixels}" height="${pixels}" ` +
    `role="img" aria-label="${alt}" shape-rendering="crispEdges">` +
    `<title>${alt}</title>` +
    `<rect width="${size}" height="${size}" fill="#fff"/>` +
    `<path fill="#000" d="${runs.join('')}"/>` +
    `</svg>`
  )
}
