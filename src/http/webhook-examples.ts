/**
 * The webhooks chapter's code: receivers that verify deliveries with the Standard Webhooks
 * libraries, and the verification by hand, in JavaScript and Python. The tolerance and the
 * secret's prefix are the service's own constants, so the code and the signer cannot disagree.
 */
import { SECRET_PREFIX, SIGNATURE_TOLERANCE_SECONDS } from '../domain/webhook-signature.js'

/** Where the examples' receivers listen, on the reader's machine. */
export const EXAMPLE_RECEIVER_PORT = 4000

export const LIBRARY_JS = `// npm install standardwebhooks
import http from 'node:http'
import { Webhook } from 'standardwebhooks'

const webhook = new Webhook(process.env.WEBHOOK_SECRET) // the endpoint's ${SECRET_PREFIX}... secret

http
  .createServer((request, response) => {
    let body = ''
    request.setEncoding('utf8')
    request.on('data', (chunk) => (body += chunk))
    request.on('end', () => {
      let event
      try {
        // The body exactly as received: parsed and serialised again, it would not match its signature.
        event = webhook.verify(body, request.headers)
      } catch {
        response.writeHead(400).end()
        return
      }
      response.writeHead(204).end() // answer first, then do the work
      console.log(request.headers['webhook-id'], event.type, event.data)
    })
  })
  .listen(${EXAMPLE_RECEIVER_PORT}, '127.0.0.1')`

export const LIBRARY_PYTHON = `# pip install standardwebhooks
import os
from http.server import BaseHTTPRequestHandler, HTTPServer

from standardwebhooks import Webhook, WebhookVerificationError

webhook = Webhook(os.environ["WEBHOOK_SECRET"])  # the endpoint's ${SECRET_PREFIX}... secret


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self):
        # The body exactly as received: parsed and serialised again, it would not match its signature.
        body = self.rfile.read(int(self.headers["Content-Length"]))
        try:
            event = webhook.verify(body, dict(self.headers))
        except WebhookVerificationError:
            self.send_response(400)
            self.end_headers()
            return
        self.send_response(204)  # answer first, then do the work
        self.end_headers()
        print(self.headers["webhook-id"], event["type"], event["data"])


HTTPServer(("127.0.0.1", ${EXAMPLE_RECEIVER_PORT}), Receiver).serve_forever()`

export const BY_HAND_JS = `import { createHmac, timingSafeEqual } from 'node:crypto'

const TOLERANCE_SECONDS = ${SIGNATURE_TOLERANCE_SECONDS}

/**
 * Whether a delivery is genuine: \`secret\` is the endpoint's ${SECRET_PREFIX}... secret, \`headers\` the
 * request's (names in lower case, as Node gives them), \`body\` the raw body as a string.
 */
export function verifyWebhook(secret, headers, body) {
  const id = headers['webhook-id']
  const timestamp = headers['webhook-timestamp']
  const signatures = headers['webhook-signature']
  if (!id || !/^[0-9]+$/.test(timestamp ?? '') || !signatures) return false
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > TOLERANCE_SECONDS) return false
  const key = Buffer.from(secret.slice('${SECRET_PREFIX}'.length), 'base64')
  const expected = createHmac('sha256', key).update(\`\${id}.\${timestamp}.\${body}\`).digest()
  return signatures.split(' ').some((signature) => {
    const [version, mac] = signature.split(',')
    const given = Buffer.from(mac ?? '', 'base64')
    return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected)
  })
}`

export const BY_HAND_PYTHON = `import base64
import hashlib
import hmac
import time

TOLERANCE_SECONDS = ${SIGNATURE_TOLERANCE_SECONDS}


def verify_webhook(secret, headers, body):
    """Whether a delivery is genuine: secret is the endpoint's ${SECRET_PREFIX}... secret, headers a dict
    of the request's headers with names in lower case, body the raw body as bytes."""
    msg_id = headers.get("webhook-id")
    timestamp = headers.get("webhook-timestamp") or ""
    signatures = headers.get("webhook-signature")
    if not msg_id or not timestamp.isdigit() or not signatures:
        return False
    if abs(time.time() - int(timestamp)) > TOLERANCE_SECONDS:
        return False
    key = base64.b64decode(secret[len("${SECRET_PREFIX}"):])
    signed = f"{msg_id}.{timestamp}.".encode() + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    return any(
        version == "v1" and hmac.compare_digest(mac, expected)
        for version, _, mac in (signature.partition(",") for signature in signatures.split(" "))
    )`
