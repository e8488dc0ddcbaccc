/**
 * An authenticator app for tests against a server on the real clock (a process the test started):
 * the code of each secret's next unused RFC 6238 step, computed by `otpauth`, as the server
 * accepts it (one step either side of now, never a step used before).
 */
import { HOTP, Secret } from 'otpauth'

const lastUsed = new Map<string, number>()

/** The code `secret` gives at RFC 6238 time step `step` (30-second steps). */
export function codeAtStep(secret: string, step: number): string {
  return HOTP.generate({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, counter: step })
}

/**
 * The next code of `secret` the server accepts now, waiting for the next step when this window's
 * are used (an enrolment is taken to have used the step before now).
 */
export async function authenticatorCode(secret: string): Promise<string> {
  for (;;) {
    const now = Math.floor(Date.now() / 30_000)
    const step = Math.max(now, (lastUsed.get(secret) ?? now - 1) + 1)
    if (step <= now + 1) {
      lastUsed.set(secret, step)
      return codeAtStep(secret, step)
    }
    await new Promise((resolve) => setTimeout(resolve, 1000))
  }
}
