/**
 * The dashboard script's passkey part: it shows the passkey forms where the browser has WebAuthn,
 * and runs each as options → the browser's ceremony → answer, in JSON with the form's CSRF token.
 * Binary fields travel as base64url, as @simplewebauthn/server reads and writes them.
 */
export const PASSKEY_JS = `
document.addEventListener('DOMContentLoaded', () => {
  if (!window.PublicKeyCredential) return
  const toBytes = (s) => Uint8Array.from(atob(s.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0))
  const toText = (b) =>
    btoa(String.fromCharCode(...new Uint8Array(b))).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '')
  const post = async (url, body) => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
      credentials: 'same-origin',
    })
    const json = await res.json().catch(() => ({ message: 'The dashboard did not answer as expected. Try again.' }))
    if (!res.ok) throw new Error(json.message || 'That did not work. Try again.')
    return json
  }
  const answer = (credential) => {
    const r = credential.response
    const response = { clientDataJSON: toText(r.clientDataJSON) }
    if ('attestationObject' in r) {
      response.attestationObject = toText(r.attestationObject)
      if (r.getTransports) response.transports = r.getTransports()
    } else {
      response.authenticatorData = toText(r.authenticatorData)
      response.signature = toText(r.signature)
      if (r.userHandle) response.userHandle = toText(r.userHandle)
    }
    return { id: credential.id, rawId: toText(credential.rawId), type: credential.type, response,
      clientExtensionResults: credential.getClientExtensionResults(),
      authenticatorAttachment: credential.authenticatorAttachment ?? undefined }
  }
  for (const form of document.querySelectorAll('form[data-passkey]')) {
    form.hidden = false
    const status = form.querySelector('[data-passkey-status]')
    form.addEventListener('submit', async (event) => {
      event.preventDefault()
      status.textContent = ''
      const fields = Object.fromEntries(new FormData(form))
      try {
        const options = await post(form.action + '/options', fields)
        let credential
        if (form.dataset.passkey === 'register') {
          credential = await navigator.credentials.create({ publicKey: { ...options,
            challenge: toBytes(options.challenge), user: { ...options.user, id: toBytes(options.user.id) },
            excludeCredentials: (options.excludeCredentials || []).map((c) => ({ ...c, id: toBytes(c.id) })) } })
        } else {
          credential = await navigator.credentials.get({ publicKey: { ...options,
            challenge: toBytes(options.challenge),
            allowCredentials: (options.allowCredentials || []).map((c) => ({ ...c, id: toBytes(c.id) })) } })
        }
        const done = await post(form.action, { ...fields, response: answer(credential) })
        window.location.assign(done.redirect)
      } catch (error) {
        status.textContent = error.name === 'NotAllowedError'
          ? 'The passkey was not used: the request was cancelled or timed out.'
          : error.message
      }
    })
  }
})
`
