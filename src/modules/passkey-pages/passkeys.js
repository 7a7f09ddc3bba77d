// Passkeys on the hosted pages, as a progressive enhancement (plain browser script, no build step). A form with
// data-passkey="create" or "get" stays hidden unless WebAuthn works here. On submit, its fields (the CSRF token too)
// are posted to data-options-url; the browser ceremony runs on the options answered; the credential, as WebAuthn JSON
// (base64url fields, @simplewebauthn's shape), goes into the form's `response` field and the form is submitted.
(() => {
  if (!window.PublicKeyCredential || !window.fetch) return;
  const bin = (s) => Uint8Array.from(atob(s.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0));
  const b64 = (buf) => {
    let s = '';
    for (const x of new Uint8Array(buf)) s += String.fromCharCode(x);
    return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  };
  const ids = (list) => (list || []).map((c) => ({ ...c, id: bin(c.id) }));

  const toJSON = (c) => {
    const r = c.response;
    const response = { clientDataJSON: b64(r.clientDataJSON) };
    if (r.attestationObject) {
      response.attestationObject = b64(r.attestationObject);
      response.transports = r.getTransports ? r.getTransports() : [];
    } else {
      response.authenticatorData = b64(r.authenticatorData);
      response.signature = b64(r.signature);
      response.userHandle = r.userHandle && r.userHandle.byteLength ? b64(r.userHandle) : null;
    }
    return {
      id: c.id,
      rawId: b64(c.rawId),
      type: c.type,
      response,
      authenticatorAttachment: c.authenticatorAttachment || undefined,
      clientExtensionResults: c.getClientExtensionResults(),
    };
  };

  async function ceremony(form) {
    const res = await fetch(form.dataset.optionsUrl, {
      method: 'POST',
      body: new URLSearchParams(new FormData(form)),
      credentials: 'same-origin',
    });
    if (!res.ok) throw new Error(`options: ${res.status}`);
    const answer = await res.json();
    const o = answer.options || answer;
    if (answer.webauthnToken && form.elements.webauthnToken) form.elements.webauthnToken.value = answer.webauthnToken;
    const publicKey = { ...o, challenge: bin(o.challenge) };
    let cred;
    if (form.dataset.passkey === 'create') {
      publicKey.user = { ...o.user, id: bin(o.user.id) };
      publicKey.excludeCredentials = ids(o.excludeCredentials);
      cred = await navigator.credentials.create({ publicKey });
    } else {
      publicKey.allowCredentials = ids(o.allowCredentials);
      cred = await navigator.credentials.get({ publicKey });
    }
    form.elements.response.value = JSON.stringify(toJSON(cred));
    form.submit();
  }

  for (const form of document.querySelectorAll('form[data-passkey]')) {
    form.hidden = false;
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      const button = form.querySelector('button');
      const error = form.querySelector('[data-passkey-error]');
      button.disabled = true;
      if (error) error.hidden = true;
      ceremony(form).catch(() => {
        if (error) error.hidden = false;
        button.disabled = false;
      });
    });
  }
  for (const p of document.querySelectorAll('[data-passkey-nojs]')) p.hidden = true;
})();
